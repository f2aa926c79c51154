"""Reading durations, and counting business days.

A duration is a ``timedelta``, ``(3, "days")`` or a string: ``"30s" "5m" "4h"
"2d"`` are calendar durations, ``"3bd"`` is three business days: weekdays
that are not holidays in a time zone, landing at the same local time of day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import holidays as holidays_package

UNITS = {
    "s": "seconds",
    "second": "seconds",
    "seconds": "seconds",
    "m": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "h": "hours",
    "hour": "hours",
    "hours": "hours",
    "d": "days",
    "day": "days",
    "days": "days",
}
BUSINESS_UNITS = ("bd", "business_day", "business_days")
_TEXT = re.compile(r"^\s*(\d+)\s*([a-z_]+)\s*$")
#: How far a wall-clock day can be shorter than 24 h across a clock change.
CLOCK_CHANGE_SLACK = timedelta(hours=2)


class InvalidDuration(ValueError):
    """A duration that cannot be read; the message quotes it."""


@dataclass(frozen=True)
class BusinessDays:
    """``days`` business days: counted per record, in its time zone and calendar."""

    days: int

    @property
    def lower_bound(self) -> timedelta:
        """No business-day deadline comes sooner than this after its anchor."""
        return timedelta(days=self.days) - CLOCK_CHANGE_SLACK


def parse_duration(value: Any) -> timedelta | BusinessDays:
    """Read a declared duration; ``InvalidDuration`` quotes what could not be read."""
    if isinstance(value, timedelta):
        result: timedelta | BusinessDays = value
    elif isinstance(value, tuple) and len(value) == 2:
        result = _from_amount(value[0], value[1], value)
    elif isinstance(value, str) and (match := _TEXT.match(value)):
        result = _from_amount(int(match[1]), match[2], value)
    else:
        raise InvalidDuration(
            f"{value!r} is not a duration; write a timedelta, (3, 'days') or a string "
            "such as '30s', '5m', '4h', '2d' or '3bd'."
        )
    if (result.days if isinstance(result, BusinessDays) else result) <= _zero(result):
        raise InvalidDuration(f"{value!r} is not a positive duration.")
    return result


def parse_timedelta(value: Any) -> timedelta:
    """Read a duration that must be calendar time (time limits, backoff, undo windows)."""
    result = parse_duration(value)
    if isinstance(result, BusinessDays):
        raise InvalidDuration(f"{value!r}: business days are only for deadlines.")
    return result


def shortest(duration: timedelta | BusinessDays) -> timedelta:
    """The least wall-clock time ``duration`` can take."""
    return duration.lower_bound if isinstance(duration, BusinessDays) else duration


def _zero(result: timedelta | BusinessDays) -> Any:
    return 0 if isinstance(result, BusinessDays) else timedelta(0)


def _from_amount(amount: Any, unit: Any, original: Any) -> timedelta | BusinessDays:
    valid_amount = isinstance(amount, int) and not isinstance(amount, bool)
    if valid_amount and unit in BUSINESS_UNITS:
        return BusinessDays(amount)
    name = UNITS.get(unit) if isinstance(unit, str) else None
    if name is None or not valid_amount:
        raise InvalidDuration(
            f"{original!r} is not a duration; the amount must be a whole number and the "
            "unit one of seconds, minutes, hours, days, business_days (or s, m, h, d, bd)."
        )
    return timedelta(**{name: amount})


# Business days ----------------------------------------------------------------


def holiday_calendar(spec: Any) -> holidays_package.HolidayBase:
    """A ``holidays`` calendar from a calendar object, an iterable of dates, or ``None``."""
    if isinstance(spec, holidays_package.HolidayBase):
        return spec
    calendar = holidays_package.HolidayBase()
    for day in spec or ():
        calendar[date.fromisoformat(day) if isinstance(day, str) else day] = "Holiday"
    return calendar


def add_duration(
    instant: datetime,
    duration: timedelta | BusinessDays,
    zone: ZoneInfo,
    calendar: holidays_package.HolidayBase,
) -> datetime:
    """``instant`` plus ``duration``; business days keep the local time of day."""
    if isinstance(duration, timedelta):
        return instant + duration
    local = instant.astimezone(zone)
    day = nth_working_day(calendar, local.date(), duration.days)
    wall = datetime.combine(day, local.time(), tzinfo=zone)
    # A wall time skipped by a clock change resolves to the same instant as its offset says.
    return wall.astimezone(UTC)


#: The attribute a calendar keeps its answers in: it lives and dies with the calendar
#: (a record's own calendar is built per call; a workflow's lasts the process).
MEMO = "_workflow_nth_working_days"


def nth_working_day(calendar: holidays_package.HolidayBase, day: date, n: int) -> date:
    """``calendar.get_nth_working_day``, remembered per calendar: entering a step computes
    each business-day deadline from the same day, and holidays walks it day by day. The
    calendar's size is part of the key, so a holiday added to it later is not missed."""
    memo = calendar.__dict__.setdefault(MEMO, {})
    key = (day, n, len(calendar))
    if key not in memo:
        memo[key] = calendar.get_nth_working_day(day, n)
    return memo[key]
