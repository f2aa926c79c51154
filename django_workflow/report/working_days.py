"""Time zones and working days of the report: the zones records name, and per zone and
UTC day of the window the non-working seconds, as a small table the statement joins on."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..durations import holiday_calendar
from .figures import ReportError

DAY = 86400
#: Zone and day in one join key (zone * ZONE_KEY + day): SQLite indexes one column of a
#: derived table, and day numbers stay far below it.
ZONE_KEY = 1_000_000


def zones_in_play(model: Any, db: str) -> list[str]:
    """The zones in play: the workflow's first (number 0), then each other zone a record
    names in ``time_zone_field``."""
    workflow = model.workflow
    zones = [workflow.time_zone]
    if workflow.time_zone_field:
        column = model._meta.get_field(workflow.time_zone_field).attname
        named = model._base_manager.using(db).order_by().values_list(column, flat=True)
        zones += sorted({name for name in named.distinct() if name} - {workflow.time_zone})
    for name in zones:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise ReportError(f"{model._meta.label}: {name!r} is not a time zone.") from error
    return zones


def non_working_spans(zone: ZoneInfo, calendar: Any, first: date, last: date) -> list[tuple]:
    """The non-working local days from ``first`` to ``last`` as UTC epoch seconds
    ``[start, end)``, adjacent days merged (a weekend is one span)."""
    spans: list[list[int]] = []
    day = first
    while day <= last:
        if not calendar.is_working_day(day):
            start, end = _midnight(day, zone), _midnight(day + timedelta(days=1), zone)
            if spans and spans[-1][1] == start:
                spans[-1][1] = end
            else:
                spans.append([start, end])
        day += timedelta(days=1)
    return [tuple(span) for span in spans]


def _midnight(day: date, zone: ZoneInfo) -> int:
    return int(datetime.combine(day, time(), tzinfo=zone).timestamp())


def calendar_days(model: Any, zones: list[str], since: datetime, until: datetime) -> list[tuple]:
    """Per zone and UTC day of the window: the non-working seconds before the day began,
    and the day's non-working pieces (start, end), padded with empty ones.

    With it, the non-working time before an instant ``t`` of day ``d`` is the day's
    count plus the part of its pieces before ``t``: one join per end of a stay.

    Non-working days next to each other are merged into one piece. A UTC day meets at
    most two local days unless the clocks change that day, so it has at most one piece;
    one meeting three local days may have two (off, on, off). Every row carries as many
    pieces as the busiest day of the window has, none when no day is off: each piece
    costs every stay two comparisons at each end.
    """
    calendar = holiday_calendar(model.workflow.holidays)
    # A day early and late: an instant on a midnight may be read into either neighbour.
    first_day = int(since.timestamp()) // DAY - 1
    last_day = int(until.timestamp()) // DAY + 1
    days = []
    for number, name in enumerate(zones):
        zone = ZoneInfo(name)
        # Local days reaching past the UTC days on both sides, in any zone.
        first = since.astimezone(zone).date() - timedelta(days=2)
        last = until.astimezone(zone).date() + timedelta(days=2)
        spans = non_working_spans(zone, calendar, first, last)
        before = 0
        for day in range(first_day, last_day + 1):
            start, end = day * DAY, (day + 1) * DAY
            pieces = [(max(s, start), min(e, end)) for s, e in spans if s < end and e > start]
            days.append((number * ZONE_KEY + day, before, start, pieces))
            before += sum(e - s for s, e in pieces)
    width = max(len(pieces) for *_, pieces in days)
    return [(key, before, *_edges(pieces, start, width)) for key, before, start, pieces in days]


def _edges(pieces: list[tuple], start: int, width: int) -> list[int]:
    """The pieces' edges in one row, padded with empty pieces to ``width``."""
    padded = pieces + [(start, start)] * (width - len(pieces))
    return [edge for piece in padded for edge in piece]
