"""A record's own time: its zone, its holidays, what a deadline counts from, and an
instant later by a duration in that zone and calendar.

A low module: the kinds of work compute their due instants with it, and the
admin reads a record's zone from it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

from ..durations import (
    InvalidDuration,
    WorkingHours,
    add_duration,
    holiday_calendar,
    parse_working_hours,
)
from ..model.evaluation import evaluate
from ..model.versions import workflow_of


def later_by(record: Any, instant: datetime, duration: Any) -> datetime:
    """``instant`` plus ``duration``; the record's zone, holidays and working hours only
    for business days and hours."""
    if isinstance(duration, timedelta):
        return instant + duration
    model = type(record)
    return add_duration(
        instant, duration, zone_of(record), calendar_of(record), working_hours(model)
    )


@cache
def working_hours(model: Any) -> WorkingHours | None:
    """``Workflow.working_hours`` read, or ``None`` when unset or unreadable (the checks
    report it)."""
    declared = model.workflow.working_hours
    if declared is None:
        return None
    try:
        return parse_working_hours(declared)
    except InvalidDuration:
        return None


def zone_of(record: Any) -> ZoneInfo:
    """The record's time zone: ``time_zone_field`` when it holds a value, else ``time_zone``."""
    workflow = workflow_of(record)
    name = getattr(record, workflow.time_zone_field, None) if workflow.time_zone_field else None
    return ZoneInfo(name or workflow.time_zone)


def calendar_of(record: Any) -> Any:
    """The record's holidays: the option itself, or what the named model method returns."""
    spec = workflow_of(record).holidays
    if isinstance(spec, str):
        return holiday_calendar(getattr(record, spec)())
    return _workflow_calendar(type(record))


@cache
def _workflow_calendar(model: Any) -> Any:
    return holiday_calendar(model.workflow.holidays)


def anchor_value(record: Any, name: str) -> datetime | None:
    """A field's value, or a calculation evaluated against the instance's values."""
    calculations = workflow_of(record).calculations
    if name not in calculations:
        return getattr(record, name)
    if name in record.__dict__:  # annotated by the query that loaded it
        return record.__dict__[name]
    return evaluate(calculations[name], record, record._state.db or "default")
