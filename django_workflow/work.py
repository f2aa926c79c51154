"""Units of scheduled work: what every automatic step, timeout and every compiles to.

A ``Work`` is all a scheduler is given. ``match(now)`` selects the records
eligible at ``now`` with bind parameters computed in Python (so time travel
in tests moves it too); ``deadline`` is the rule ``due_at`` turns into an
instant per record. The two agree: for calendar durations ``match`` is exact;
for business days and wall-clock (``cron``) schedules it is a pre-filter on
a lower bound that the index still serves, and ``due_at`` decides the instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F, Q
from django.utils import timezone

from .columns import (
    ON_ENTER,
    STATE_ENTERED_AT,
    fired_column,
    fired_count_column,
    last_fired_column,
)
from .declaration import Every, Retry, Step, Timeout
from .durations import BusinessDays, InvalidDuration, parse_duration, parse_timedelta, shortest
from .events import WorkKind

Duration = timedelta | BusinessDays


@dataclass(frozen=True)
class Deadline:
    """``field`` plus ``fire_after``; with ``fire_after=None`` the field holds the instant
    (a timeout's ``fire_at``) or, for an every, its ``cron`` says when."""

    field: str
    fire_after: Duration | None = None


@dataclass(frozen=True)
class Work:
    name: str
    #: The model it runs on, as ``app_label.ModelName``: all a scheduler needs to find it.
    model_label: str
    kind: WorkKind
    step: str
    #: The declared name: the step's, the timeout's or the every's.
    entity: str
    state_attribute: str
    deadline: Deadline | None
    retry: Retry
    check_interval: str
    queue: str
    #: The workflow's ``scheduler`` option: which scheduler runs this work.
    scheduler: str
    action: str | None = None
    transition_to: str | None = None
    until: Duration | None = None
    fired_field: str | None = None
    last_fired_field: str | None = None
    #: Fired columns written together when this work fires (timeouts sharing the action).
    fired_together: tuple[str, ...] = ()
    self_scheduled: bool = False
    #: A step's ``time_limit``: its action's, and its ``on_enter``'s.
    time_limit: timedelta | None = None
    #: An every's wall-clock schedule (a cron expression in the record's zone).
    cron: str | None = None
    business_days_only: bool = False
    #: An every's firings per round, counted in ``count_field``.
    times: int | None = None
    count_field: str | None = None

    @property
    def exact(self) -> bool:
        """Whether ``match`` alone decides eligibility (no business-day arithmetic, no
        wall-clock schedule: both depend on the record's zone)."""
        durations = (self.deadline.fire_after if self.deadline else None, self.until)
        return self.cron is None and not any(isinstance(d, BusinessDays) for d in durations)

    @property
    def anchor(self) -> str:
        """The column a poll orders by, so PostgreSQL walks the index."""
        if self.kind == WorkKind.EVERY:
            return self.last_fired_field or STATE_ENTERED_AT
        return self.deadline.field if self.deadline else "pk"

    def match(self, now: datetime | None = None) -> Q:
        """Records eligible at ``now`` (a pre-filter for business days; see ``exact``)."""
        now = now or timezone.now()
        in_step = Q(**{self.state_attribute: self.step})
        if self.kind == WorkKind.STEP:
            return in_step
        if self.kind == WorkKind.EVERY:
            return self._every_match(in_step, now)
        deadline = self.deadline
        cutoff = now if deadline.fire_after is None else now - shortest(deadline.fire_after)
        condition = in_step & Q(**{f"{deadline.field}__lte": cutoff})
        if self.fired_field:
            condition &= Q(**{f"{self.fired_field}__isnull": True})
        return condition

    def _every_match(self, in_step: Q, now: datetime) -> Q:
        # Due once `interval` has passed since the later of the last firing and the entry
        # (a cron every: some time has, as its next instant is strictly after that one).
        # Each OR branch repeats the step so SQLite can use an index per branch.
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


def soonest_at_entry(works: tuple[Work, ...]) -> tuple[Work, ...]:
    """Of a step's deadlines, those that can be the soonest when a record enters it.

    Timeouts counted from the entry by the same kind of duration (calendar time,
    or business days in the record's calendar) fall due in the order of their
    lengths, and none has fired yet: only the shortest of each kind can come
    first. Every other deadline is kept.
    """
    shortest: dict[type, Work] = {}
    kept = []
    for work in works:
        length = _entry_length(work)
        if length is None:
            kept.append(work)
            continue
        best = shortest.get(type(length))
        if best is None or length < _entry_length(best):
            shortest[type(length)] = work
    return (*kept, *shortest.values())


def _entry_length(work: Work) -> timedelta | int | None:
    """How long after the entry a timeout counted from it falls due (business days as
    their count); ``None`` for any other deadline."""
    deadline = work.deadline
    if work.kind != WorkKind.TIMEOUT or deadline is None or deadline.field != STATE_ENTERED_AT:
        return None
    if isinstance(deadline.fire_after, BusinessDays):
        return deadline.fire_after.days
    return deadline.fire_after


def compile_works(workflow: Any) -> tuple[Work, ...]:
    """Every unit of work of a compiled workflow, in declaration order."""
    works: list[Work] = []
    for step_name, step in workflow.steps.items():
        if step.is_automatic:
            works.append(_step_work(workflow, step_name, step))
        if step.on_enter is not None:
            works.append(_entry_work(workflow, step_name, step))
        for deadline in step.deadlines:
            works.append(_deadline_work(workflow, step_name, step, deadline))
    return tuple(works)


def _common(workflow: Any, step: str) -> dict[str, Any]:
    return {
        "model_label": workflow.model._meta.label,
        "step": step,
        "state_attribute": workflow.state_attribute,
        "queue": workflow.queue,
        "scheduler": workflow.scheduler,
    }


def _step_work(workflow: Any, name: str, step: Step) -> Work:
    return Work(
        name=f"step:{name}",
        kind=WorkKind.STEP,
        entity=name,
        deadline=None,
        retry=step.retry or Retry(),
        check_interval=workflow.check_interval,
        action=step.action,
        time_limit=_time_limit(step),
        **_common(workflow, name),
    )


def _entry_work(workflow: Any, name: str, step: Step) -> Work:
    """``Step(on_enter=...)``: an effect owed to each entry, run from its ``PendingEffect``
    row (see ``effects``); no deadline, no fired column."""
    return Work(
        name=f"enter:{name}",
        kind=WorkKind.EFFECT,
        entity=ON_ENTER,
        deadline=None,
        retry=step.retry or Retry(),
        check_interval=workflow.check_interval,
        action=step.on_enter,
        time_limit=_time_limit(step),
        **_common(workflow, name),
    )


def _time_limit(step: Step) -> timedelta | None:
    try:
        return parse_timedelta(step.time_limit) if step.time_limit is not None else None
    except InvalidDuration:  # reported by the checks
        return None


def _deadline_work(workflow: Any, step_name: str, step: Step, entity: Timeout | Every) -> Work:
    check_interval = entity.check_interval or workflow.check_interval
    if isinstance(entity, Every):
        return _every_work(workflow, step_name, entity, check_interval)
    if entity.fire_at is not None:
        deadline = Deadline(entity.fire_at)
    else:
        deadline = Deadline(entity.field or STATE_ENTERED_AT, parse_duration(entity.fire_after))
    fired = fired_column(step_name, entity.name) if entity.action else None
    together = tuple(
        fired_column(step_name, other.name)
        for other in step.timeouts
        if fired and other.action == entity.action
    )
    return Work(
        name=f"timeout:{step_name}.{entity.name}",
        kind=WorkKind.TIMEOUT,
        entity=entity.name,
        deadline=deadline,
        retry=entity.retry or Retry(),
        check_interval=check_interval,
        action=entity.action,
        transition_to=entity.transition_to,
        fired_field=fired,
        fired_together=together,
        self_scheduled=entity.self_scheduled,
        **_common(workflow, step_name),
    )


def _every_work(workflow: Any, step_name: str, every: Every, check_interval: str) -> Work:
    """An every on an ``interval`` or on a ``cron``; a malformed ``times`` is left out
    (the checks report it)."""
    times = every.times if counts_firings(every) else None
    return Work(
        name=f"every:{step_name}.{every.name}",
        kind=WorkKind.EVERY,
        entity=every.name,
        deadline=Deadline(STATE_ENTERED_AT, _interval(every)),
        retry=Retry(),
        check_interval=check_interval,
        action=every.action,
        until=parse_duration(every.until) if every.until is not None else None,
        last_fired_field=last_fired_column(step_name, every),
        cron=every.cron,
        business_days_only=every.business_days_only is True,
        times=times,
        count_field=fired_count_column(step_name, every) if times is not None else None,
        **_common(workflow, step_name),
    )


def _interval(every: Every) -> Duration | None:
    if every.cron is not None or every.interval is None:  # both or neither: the checks say
        return None
    return parse_duration(every.interval)


def counts_firings(every: Any) -> bool:
    """Whether an every declares a usable ``times`` (a positive int), so its firings
    are counted in a column of their own."""
    times = getattr(every, "times", None)
    return isinstance(times, int) and not isinstance(times, bool) and times > 0
