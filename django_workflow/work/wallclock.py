"""Wall-clock schedules: the instants a cron expression names in a time zone.

croniter walks *naive* local wall times, which is plain calendar arithmetic:
no clock change can make it skip or repeat a day. Each wall time is then
placed in the zone with zoneinfo, by two rules:

- a wall time a spring-forward skips (02:30 on the night clocks jump from
  02:00 to 03:00) becomes the first valid instant after the gap, the jump
  itself (03:00 local that day);
- a wall time a fall-back repeats becomes its first occurrence only.

Both rules map wall times to instants without ever going backwards, so "the
first instant strictly after ``after``" is found by walking wall times from
``after``'s own. croniter's handling of aware datetimes is not used: it has
moved and repeated firings across clock changes over its releases.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, croniter

#: How far ahead a schedule is searched before it is taken never to fire again
#: (a 29 February schedule limited to working days can wait for years).
HORIZON = timedelta(days=366 * 12)


def next_firing(
    cron: str, after: datetime, zone: ZoneInfo, working_day: Any = None
) -> datetime | None:
    """The first instant strictly after ``after`` at which ``cron`` fires in ``zone``.

    ``working_day`` (a ``date -> bool`` callable), when given, leaves out the
    instants whose local date it rejects. ``None`` when nothing fires within
    ``HORIZON``.
    """
    wall = after.astimezone(zone).replace(tzinfo=None)
    horizon = wall + HORIZON
    walls = croniter(cron, wall)
    while True:
        try:
            candidate = walls.get_next(datetime)
        except CroniterBadDateError:  # a date that never comes, such as 30 February
            return None
        if candidate > horizon:
            return None
        instant = place(candidate, zone)
        if instant <= after:
            continue  # a repeated wall time whose first occurrence has passed
        if working_day is None or working_day(instant.astimezone(zone).date()):
            return instant
        walls = croniter(cron, _last_minute_of(instant.astimezone(zone).date()))


def place(wall: datetime, zone: ZoneInfo) -> datetime:
    """The aware instant (UTC) of the naive local ``wall`` time in ``zone``, by the rules above."""
    first = wall.replace(tzinfo=zone, fold=0)
    second = wall.replace(tzinfo=zone, fold=1)
    if _exists(first, zone):
        return min(first.astimezone(UTC), second.astimezone(UTC))  # the first occurrence
    return _jump(second.astimezone(UTC), first.astimezone(UTC), zone)


def _exists(aware: datetime, zone: ZoneInfo) -> bool:
    """Whether the wall time of ``aware`` is one the zone's clocks show (not in a gap)."""
    shown = aware.astimezone(UTC).astimezone(zone)
    return shown.replace(tzinfo=None) == aware.replace(tzinfo=None)


def _jump(before: datetime, after: datetime, zone: ZoneInfo) -> datetime:
    """The instant of a spring-forward between two UTC instants that straddle it: the
    first instant whose offset is the later one (found to the second; zones change on
    whole seconds)."""
    offset = after.astimezone(zone).utcoffset()
    low, high = before, after
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) // 2
        middle = middle.replace(microsecond=0)
        if middle.astimezone(zone).utcoffset() == offset:
            high = middle
        else:
            low = middle
    return high


def _last_minute_of(day: date) -> datetime:
    """Where to resume a walk so that it continues on the next day."""
    return datetime.combine(day, time(23, 59))
