"""Reading durations, and counting business days.

A duration is a ``timedelta``, ``(3, "days")`` or a string: ``"30s" "5m" "4h"
"2d"`` are calendar durations, ``"3bd"`` is three business days: weekdays
that are not holidays in a time zone, landing at the same local time of day;
``"16bh"`` is sixteen business hours: time inside ``Workflow.working_hours``
on business days.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
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
HOUR_UNITS = ("bh", "business_hour", "business_hours")
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


@dataclass(frozen=True)
class BusinessHours:
    """``hours`` business hours: time inside the working hours of business days, counted
    per record in its time zone and calendar."""

    hours: int

    @property
    def length(self) -> timedelta:
        """How much working time it takes."""
        return timedelta(hours=self.hours)

    @property
    def lower_bound(self) -> timedelta:
        """No business-hour deadline comes sooner than this after its anchor (a working
        day can hold a clock change that skips an hour)."""
        return max(timedelta(0), self.length - CLOCK_CHANGE_SLACK)


def is_calendar(duration: Any) -> bool:
    """Whether ``duration`` is plain calendar time, the same for every record."""
    return isinstance(duration, timedelta)


def parse_duration(value: Any) -> timedelta | BusinessDays | BusinessHours:
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
            "such as '30s', '5m', '4h', '2d', '3bd' or '16bh'."
        )
    if _amount(result) <= _zero(result):
        raise InvalidDuration(f"{value!r} is not a positive duration.")
    return result


def parse_timedelta(value: Any) -> timedelta:
    """Read a duration that must be calendar time (time limits, backoff, undo windows)."""
    result = parse_duration(value)
    if not is_calendar(result):
        unit = "days" if isinstance(result, BusinessDays) else "hours"
        raise InvalidDuration(f"{value!r}: business {unit} are only for deadlines.")
    return result


def shortest(duration: timedelta | BusinessDays | BusinessHours) -> timedelta:
    """The least wall-clock time ``duration`` can take."""
    return duration if is_calendar(duration) else duration.lower_bound


def _amount(result: timedelta | BusinessDays | BusinessHours) -> Any:
    if isinstance(result, BusinessDays):
        return result.days
    return result.hours if isinstance(result, BusinessHours) else result


def _zero(result: timedelta | BusinessDays | BusinessHours) -> Any:
    return timedelta(0) if is_calendar(result) else 0


def _from_amount(amount: Any, unit: Any, original: Any) -> timedelta | BusinessDays | BusinessHours:
    valid_amount = isinstance(amount, int) and not isinstance(amount, bool)
    if valid_amount and unit in BUSINESS_UNITS:
        return BusinessDays(amount)
    if valid_amount and unit in HOUR_UNITS:
        return BusinessHours(amount)
    name = UNITS.get(unit) if isinstance(unit, str) else None
    if name is None or not valid_amount:
        raise InvalidDuration(
            f"{original!r} is not a duration; the amount must be a whole number and the "
            "unit one of seconds, minutes, hours, days, business_days, business_hours "
            "(or s, m, h, d, bd, bh)."
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
    duration: timedelta | BusinessDays | BusinessHours,
    zone: ZoneInfo,
    calendar: holidays_package.HolidayBase,
    hours: WorkingHours | None = None,
) -> datetime:
    """``instant`` plus ``duration``; business days keep the local time of day; business
    hours count only the working ``hours`` (``ValueError`` without them)."""
    if isinstance(duration, timedelta):
        return instant + duration
    if isinstance(duration, BusinessHours):
        if hours is None:
            raise ValueError(f"{duration.hours}bh needs Workflow.working_hours.")
        return add_working_time(instant, duration.length, zone, calendar, hours)
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


# Business hours -----------------------------------------------------------------

_HOURS = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")
#: How many days a walk through the calendar may look at before it gives up: a calendar
#: without a working day in ten years is a mistake, not a schedule.
LONGEST_WALK = 3660


@dataclass(frozen=True)
class WorkingHours:
    """A working day's window in local time: ``start`` to ``end`` (``end`` may be
    midnight at the day's end, written ``24:00``)."""

    start: timedelta
    end: timedelta

    def window(self, day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
        """The day's working window as instants (a wall time a clock change skipped
        lands where its offset says)."""
        midnight = datetime.combine(day, time(0), tzinfo=zone)
        return _wall(midnight, self.start), _wall(midnight, self.end)


def _wall(midnight: datetime, offset: timedelta) -> datetime:
    day = midnight.date() + timedelta(days=offset.days)
    wall = datetime.combine(day, time(0), tzinfo=midnight.tzinfo) + timedelta(
        seconds=offset.seconds
    )
    return wall.astimezone(UTC)


def parse_working_hours(value: Any) -> WorkingHours:
    """Read ``"09:00-17:00"``; ``InvalidDuration`` quotes what could not be read."""
    match = _HOURS.match(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidDuration(
            f"{value!r} is not working hours; write 'HH:MM-HH:MM', e.g. '09:00-17:00'."
        )
    start_h, start_m, end_h, end_m = (int(part) for part in match.groups())
    start = timedelta(hours=start_h, minutes=start_m)
    end = timedelta(hours=end_h, minutes=end_m)
    if start_m > 59 or end_m > 59 or start >= end or end > timedelta(hours=24):
        raise InvalidDuration(
            f"{value!r}: the start must come before the end, both between 00:00 and 24:00."
        )
    return WorkingHours(start, end)


def is_business_day(calendar: holidays_package.HolidayBase, day: date) -> bool:
    """A weekday that is not a holiday: what ``bd`` counts (``holidays``' own rule)."""
    return calendar.is_working_day(day)


def working_windows(
    after: datetime, zone: ZoneInfo, calendar: holidays_package.HolidayBase, hours: WorkingHours
) -> Any:
    """The working windows that end after ``after``, in order, as ``(start, end)`` instants,
    each starting no earlier than ``after``."""
    day = after.astimezone(zone).date() - timedelta(days=1)  # a window may span midnight UTC
    for _ in range(LONGEST_WALK):
        if is_business_day(calendar, day):
            start, end = hours.window(day, zone)
            if end > after:
                yield max(start, after), end
        day += timedelta(days=1)
    raise ValueError(f"no working day within {LONGEST_WALK} days of {after:%Y-%m-%d}.")


def add_working_time(
    instant: datetime,
    length: timedelta,
    zone: ZoneInfo,
    calendar: holidays_package.HolidayBase,
    hours: WorkingHours,
) -> datetime:
    """The instant when ``length`` of working time has passed since ``instant``."""
    left = length
    for start, end in working_windows(instant, zone, calendar, hours):
        if end - start >= left:
            return start + left
        left -= end - start
    raise AssertionError("working_windows never ends without raising")


def working_time_between(
    start: datetime,
    end: datetime,
    zone: ZoneInfo,
    calendar: holidays_package.HolidayBase,
    hours: WorkingHours,
) -> timedelta:
    """How much working time lies between ``start`` and ``end`` (none when ``end`` is not
    after ``start``)."""
    total = timedelta(0)
    if end <= start:
        return total
    for window_start, window_end in working_windows(start, zone, calendar, hours):
        if window_start >= end:
            break
        total += min(window_end, end) - window_start
    return total
