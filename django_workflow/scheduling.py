"""When is a record due? ``due_at`` and the pending deadlines of a record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

from django.utils import timezone

from .columns import STATE_ENTERED_AT
from .durations import add_duration, holiday_calendar
from .evaluation import evaluate
from .events import WorkKind
from .wallclock import next_firing
from .work import Work


@dataclass(frozen=True)
class PendingDeadline:
    name: str
    kind: str  # "action" | "transition" | "every"
    due_at: datetime
    target: str  # the action to run, or the step to move to
    label: Any = ""  # how people read it: the deadline's ``label``, else its humanised name


def due_at(work: Work, record: Any, now: datetime | None = None) -> datetime | None:
    """The instant ``record`` becomes due for ``work``, or ``None`` if it never will as it is.

    An every whose ``until`` has passed by ``now`` (default: the current time) is over.
    """
    if getattr(record, work.state_attribute) != work.step:
        return None
    if work.kind == WorkKind.STEP:
        return getattr(record, STATE_ENTERED_AT)
    if work.kind == WorkKind.EVERY:
        return _every_due(work, record, now or timezone.now())
    if work.fired_field and getattr(record, work.fired_field) is not None:
        return None
    anchor = anchor_value(record, work.deadline.field)
    if anchor is None or work.deadline.fire_after is None:
        return anchor
    return _later_by(record, anchor, work.deadline.fire_after)


def _every_due(work: Work, record: Any, now: datetime) -> datetime | None:
    """The next firing after the later of the last one and the entry (a worker that was
    down fires once, not once per instant it missed); ``None`` once ``times`` firings
    happened this round, or past ``until``."""
    if work.times is not None and firings_this_round(work, record) >= work.times:
        return None
    entered = getattr(record, STATE_ENTERED_AT)
    last = getattr(record, work.last_fired_field)
    due = _next_every_instant(work, record, entered if last is None else max(last, entered))
    if due is None or work.until is None:
        return due
    until = _later_by(record, entered, work.until)
    return None if due >= until or now >= until else due


def _next_every_instant(work: Work, record: Any, since: datetime) -> datetime | None:
    """``interval`` after ``since``, or the first instant of ``cron`` strictly after it."""
    if work.cron is not None:
        working_day = calendar_of(record).is_working_day if work.business_days_only else None
        return next_firing(work.cron, since, zone_of(record), working_day)
    if work.deadline.fire_after is None:  # neither interval nor cron: the checks report it
        return None
    return _later_by(record, since, work.deadline.fire_after)


def firings_this_round(work: Work, record: Any) -> int:
    """How often an every with ``times`` fired since the record entered its step.

    A firing always falls strictly after the entry, so a last firing at or before
    it belongs to an earlier round. A count not written yet (``times`` added to a
    declaration after records fired) counts from nothing.
    """
    last = getattr(record, work.last_fired_field)
    if last is None or last <= getattr(record, STATE_ENTERED_AT):
        return 0
    return getattr(record, work.count_field) or 0


def count_after_firing(work: Work, record: Any) -> dict[str, int]:
    """The count column to write with a firing of ``work`` (none without ``times``);
    read before the firing's instant is put on the record."""
    if work.count_field is None:
        return {}
    return {work.count_field: firings_this_round(work, record) + 1}


def _later_by(record: Any, instant: datetime, duration: Any) -> datetime:
    """``instant`` plus ``duration``; the record's zone and holidays only for business days."""
    if isinstance(duration, timedelta):
        return instant + duration
    return add_duration(instant, duration, zone_of(record), calendar_of(record))


def pending_deadlines(record: Any) -> list[PendingDeadline]:
    """The current step's deadlines that will fire as things stand, soonest first."""
    workflow = type(record).workflow
    pending = []
    for work in workflow.works:
        if work.kind == WorkKind.STEP or (due := due_at(work, record)) is None:
            continue
        kind = (
            "every"
            if work.kind == WorkKind.EVERY
            else "transition"
            if work.transition_to
            else "action"
        )
        target = work.transition_to or work.action
        label = workflow.deadline_label(work.step, work.entity)
        pending.append(PendingDeadline(work.entity, kind, due, target, label))
    return sorted(pending, key=lambda deadline: deadline.due_at)


def zone_of(record: Any) -> ZoneInfo:
    """The record's time zone: ``time_zone_field`` when it holds a value, else ``time_zone``."""
    workflow = type(record).workflow
    name = getattr(record, workflow.time_zone_field, None) if workflow.time_zone_field else None
    return ZoneInfo(name or workflow.time_zone)


def calendar_of(record: Any) -> Any:
    """The record's holidays: the option itself, or what the named model method returns."""
    spec = type(record).workflow.holidays
    if isinstance(spec, str):
        return holiday_calendar(getattr(record, spec)())
    return _workflow_calendar(type(record))


@cache
def _workflow_calendar(model: Any) -> Any:
    return holiday_calendar(model.workflow.holidays)


def anchor_value(record: Any, name: str) -> datetime | None:
    """A field's value, or a calculation evaluated against the instance's values."""
    calculations = type(record).workflow.calculations
    if name not in calculations:
        return getattr(record, name)
    if name in record.__dict__:  # annotated by the query that loaded it
        return record.__dict__[name]
    return evaluate(calculations[name], record, record._state.db or "default")
