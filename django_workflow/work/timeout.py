"""Timeouts: a deadline counted from a field (or held by one) that moves the record or
runs an action once per round."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from ..durations import BusinessDays, shortest
from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import PendingKind, WorkKind
from .base import Work
from .record_time import anchor_value, later_by


@dataclass(frozen=True, kw_only=True)
class Deadlined(Work):
    """A deadline the schedulers run, unless the project runs it (``self_scheduled``)."""


@dataclass(frozen=True, kw_only=True)
class TimeoutWork(Deadlined):
    kind: WorkKind = field(init=False, default=WorkKind.TIMEOUT)
    transition_to: str | None = None
    fired_field: str | None = None
    #: Fired columns written together when this work fires (timeouts sharing the action).
    fired_together: tuple[str, ...] = ()
    self_scheduled: bool = False

    def match(self, now: datetime | None = None) -> Q:
        now = now or timezone.now()
        deadline = self.deadline
        cutoff = now if deadline.fire_after is None else now - shortest(deadline.fire_after)
        condition = self.in_step() & Q(**{f"{deadline.field}__lte": cutoff})
        if self.fired_field:
            condition &= Q(**{f"{self.fired_field}__isnull": True})
        return condition

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        if self.fired_field and getattr(record, self.fired_field) is not None:
            return None
        anchor = anchor_value(record, self.deadline.field)
        if anchor is None or self.deadline.fire_after is None:
            return anchor
        return later_by(record, anchor, self.deadline.fire_after)

    def entry_length(self) -> timedelta | int | None:
        deadline = self.deadline
        if deadline is None or deadline.field != STATE_ENTERED_AT:
            return None
        if isinstance(deadline.fire_after, BusinessDays):
            return deadline.fire_after.days
        return deadline.fire_after


@dataclass(frozen=True, kw_only=True)
class TransitionTimeout(TimeoutWork):
    """Moves the record ``transition_to``: whole batches in one UPDATE."""

    pending_kind = PendingKind.TRANSITION

    @property
    def target(self) -> str | None:
        return self.transition_to


@dataclass(frozen=True, kw_only=True)
class ActionTimeout(TimeoutWork):
    """Runs ``action`` once per round, marked in its fired column."""

    pending_kind = PendingKind.ACTION
