"""Every: an action run while a record stays in its step, on an ``interval`` or at the
wall-clock instants of a ``cron``, until ``until``, at most ``times`` per stay."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F, Q
from django.utils import timezone

from ..durations import is_calendar, shortest
from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import PendingKind, WorkKind
from .base import Duration
from .record_time import calendar_of, later_by, zone_of
from .timeout import Deadlined
from .wallclock import next_firing


@dataclass(frozen=True, kw_only=True)
class EveryWork(Deadlined):
    kind: WorkKind = field(init=False, default=WorkKind.EVERY)
    until: Duration | None = None
    last_fired_field: str | None = None
    #: The wall-clock schedule (a cron expression in the record's zone).
    cron: str | None = None
    business_days_only: bool = False
    #: Firings per round, counted in ``count_field``.
    times: int | None = None
    count_field: str | None = None

    pending_kind = PendingKind.EVERY

    @property
    def exact(self) -> bool:
        durations = (self.deadline.fire_after if self.deadline else None, self.until)
        return self.cron is None and all(d is None or is_calendar(d) for d in durations)

    @property
    def anchor(self) -> str:
        return self.last_fired_field or STATE_ENTERED_AT

    def match(self, now: datetime | None = None) -> Q:
        # Due once `interval` has passed since the later of the last firing and the entry
        # (a cron every: some time has, as its next instant is strictly after that one).
        # Each OR branch repeats the step so SQLite can use an index per branch.
        now = now or timezone.now()
        in_step = self.in_step()
        if self.cron is None:
            cutoff, lookup = now - shortest(self.deadline.fire_after), "lte"
        else:
            cutoff, lookup = now, "lt"
        entered = Q(**{f"{STATE_ENTERED_AT}__{lookup}": cutoff})
        if isinstance(self.until, timedelta):
            entered &= Q(**{f"{STATE_ENTERED_AT}__gt": now - self.until})
        never = Q(**{f"{self.last_fired_field}__isnull": True})
        long_ago = Q(**{f"{self.last_fired_field}__{lookup}": cutoff})
        if self.count_field is not None:  # `times` firings not yet spent this round
            long_ago &= (
                Q(**{f"{self.count_field}__isnull": True})
                | Q(**{f"{self.count_field}__lt": self.times})
                | Q(**{f"{self.last_fired_field}__lte": F(STATE_ENTERED_AT)})
            )
        return (in_step & never & entered) | (in_step & long_ago & entered)

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        """The next firing after the later of the last one and the entry (a worker that was
        down fires once, not once per instant it missed); ``None`` once ``times`` firings
        happened this round, or past ``until``."""
        if self.times is not None and self.firings_this_round(record) >= self.times:
            return None
        entered = getattr(record, STATE_ENTERED_AT)
        last = getattr(record, self.last_fired_field)
        due = self._next_instant(record, entered if last is None else max(last, entered))
        if due is None or self.until is None:
            return due
        until = later_by(record, entered, self.until)
        return None if due >= until or now >= until else due

    def _next_instant(self, record: Any, since: datetime) -> datetime | None:
        """``interval`` after ``since``, or the first instant of ``cron`` strictly after it."""
        if self.cron is not None:
            working_day = calendar_of(record).is_working_day if self.business_days_only else None
            return next_firing(self.cron, since, zone_of(record), working_day)
        if self.deadline.fire_after is None:  # neither interval nor cron: the checks report it
            return None
        return later_by(record, since, self.deadline.fire_after)

    def firings_this_round(self, record: Any) -> int:
        """How often it fired since the record entered its step.

        A firing always falls strictly after the entry, so a last firing at or before
        it belongs to an earlier round. A count not written yet (``times`` added to a
        declaration after records fired) counts from nothing.
        """
        last = getattr(record, self.last_fired_field)
        if last is None or last <= getattr(record, STATE_ENTERED_AT):
            return 0
        return getattr(record, self.count_field) or 0

    def count_after_firing(self, record: Any) -> dict[str, int]:
        """Read before the firing's instant is put on the record."""
        if self.count_field is None:
            return {}
        return {self.count_field: self.firings_this_round(record) + 1}
