"""Time in step: how long records stayed in each step, read from the transition log.

For one workflow model and a window ``[since, until)``: per step, the stays that
began in the window, their median and 90th percentile in calendar hours and in
business hours, and per timeout of the step the share of those stays in which it
fired. Everything is computed by one SQL statement, on SQLite and PostgreSQL
alike: no log row is loaded into Python.

A stay is one row: the log row that ended it names the step and when the record
had entered it (``from_state_entered_at``); a stay not ended yet is the record's
current step, read from the record. Percentiles are PostgreSQL's
``percentile_cont``, or the same figures from row numbers on SQLite.

The report sees the log as it stood at ``until``: a stay still open then (or left
later) counts up to ``until``, and a timeout that fired later did not fire. A
deleted record's ended stays still count; its open one went with it.

Business hours are the hours of the stay that fell on working days of the
record's calendar, in the record's time zone (24 per working day), the days a
business-day deadline counts. The few non-working days of the window are worked
out here, per zone, as a small table of UTC days the statement joins on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.contenttypes.models import ContentType
from django.db import connections, router, transaction
from django.db.models import Case, Count, F, FloatField, Func, Q, Value, When
from django.utils import timezone

from .columns import STATE_ENTERED_AT
from .durations import holiday_calendar
from .events import Trigger
from .models import TransitionLog

DAY = 86400
#: Percentiles as exact fractions (numerator, denominator), so SQL can split ranks.
MEDIAN, P90 = (1, 2), (9, 10)
#: Log rows that do not begin a stay: failures and halts of an automatic step, and votes
#: (cast or retracted in place).
NOT_ENTRIES = (Trigger.FAILED, Trigger.HALTED, Trigger.VOTE)
#: Zone and day in one join key (zone * ZONE_KEY + day): SQLite indexes one column of a
#: derived table, and day numbers stay far below it.
ZONE_KEY = 1_000_000
#: PostgreSQL's memory for the report's sorts, for its own transaction only.
WORK_MEM = "256MB"
INTEGER_KEYS = {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField"}


class ReportError(ValueError):
    """The report cannot be made as asked; the message says why and what to change."""


@dataclass(frozen=True)
class TimeoutFigures:
    """One timeout of a step: in how many stays it fired, and their share."""

    name: str
    kind: str  # "action" | "transition"
    fired: int
    breach_rate: float | None  # fired / stays; None when the step had no stay


@dataclass(frozen=True)
class StepFigures:
    """Time in one step, over the stays that began in the window."""

    step: str
    label: str
    stays: int
    #: Of those stays, how many had not ended at the report's end (counted up to it).
    open: int
    median_hours: float | None
    p90_hours: float | None
    median_business_hours: float | None
    p90_business_hours: float | None
    timeouts: tuple[TimeoutFigures, ...]
    declared: bool = True


@dataclass(frozen=True)
class Report:
    model: Any
    since: datetime
    until: datetime
    steps: list[StepFigures]
    #: Why business hours are missing, when they are (``None`` when computed).
    business_hours_note: str | None = None


def time_in_step(
    model: Any, since: datetime, until: datetime | None = None, using: str | None = None
) -> Report:
    """The report for ``model`` over the stays that began in ``[since, until)``.

    ``until`` defaults to now. Raises ``ReportError`` for a model that does not log,
    naive or reversed bounds, an unknown time zone on a record, or a database
    other than SQLite or PostgreSQL.
    """
    until = until or timezone.now()
    _check(model, since, until)
    db = using or router.db_for_read(model)
    vendor = connections[db].vendor
    if vendor not in ("sqlite", "postgresql"):
        raise ReportError(f"The time-in-step report runs on SQLite and PostgreSQL, not {vendor}.")
    zones, note = _zones(model, db), _business_hours_note(model)
    days = None if note else _calendar_days(model, zones, since, until)
    with transaction.atomic(using=db), connections[db].cursor() as cursor:
        if vendor == "postgresql":
            # The sorts of a large window fit in memory; compiling the generated
            # expressions (JIT) costs more than it saves on a statement run once.
            cursor.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
            cursor.execute("SET LOCAL jit = off")
        cursor.execute(*_statement(model, db, since, until, zones, days))
        rows = cursor.fetchall()
    per_step: dict[str, tuple] = {}
    for row in rows:  # a terminal step's open stays are counted apart from its ended ones
        if row[0] == "step":
            stays, still_open, *seconds = row[3:]
            before = per_step.get(row[1], (0, 0))
            per_step[row[1]] = (before[0] + stays, before[1] + still_open, *seconds)
    fired = {(row[1], row[2]): row[3] for row in rows if row[0] == "fired"}
    figures = _figures(model, per_step, fired, business=days is not None)
    return Report(model, since, until, figures, note)


def _check(model: Any, since: datetime, until: datetime) -> None:
    workflow = getattr(model, "workflow", None)
    if workflow is None:
        raise ReportError(f"{model._meta.label} declares no workflow.")
    if workflow.log is not True:
        raise ReportError(
            f"{model._meta.label} keeps no transition log, which the report reads; "
            "set `log = True` in its `class Workflow:`."
        )
    if timezone.is_naive(since) or timezone.is_naive(until):
        raise ReportError("The report's bounds must be aware datetimes (with a time zone).")
    if since >= until:
        raise ReportError(f"The report's start ({since}) must come before its end ({until}).")


def _business_hours_note(model: Any) -> str | None:
    """A calendar returned per record by a model method cannot be known without loading
    every record, so such a model's report leaves business hours out, and says so."""
    holidays = model.workflow.holidays
    if isinstance(holidays, str):
        return (
            f"Business hours are not reported: {model._meta.label} reads its holidays per "
            f"record (`holidays = {holidays!r}`)."
        )
    return None


# Time zones and working days --------------------------------------------------------


def _zones(model: Any, db: str) -> list[str]:
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


def _calendar_days(model: Any, zones: list[str], since: datetime, until: datetime) -> list[tuple]:
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


# The statements ---------------------------------------------------------------------


class EpochSeconds(Func):
    """An instant as seconds since 1970 (a float), on SQLite and PostgreSQL."""

    output_field = FloatField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = "((julianday(%(expressions)s) - 2440587.5) * 86400.0)"
        return self.as_sql(compiler, connection, template=template)

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # date_part gives a float directly; EXTRACT gives a numeric, far slower to carry.
        return self.as_sql(compiler, connection, template="date_part('epoch', %(expressions)s)")


def _log_rows(model: Any, db: str, since: datetime, until: datetime, condition: Q) -> Any:
    """The model's log rows meeting ``condition`` that belong to stays begun in the window."""
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    rows = TransitionLog.objects.using(db).filter(
        condition,
        content_type=content_type,
        from_state_entered_at__gte=since,
        from_state_entered_at__lt=until,
    )
    return rows.order_by()


def _leaving(model: Any) -> Q:
    """A log row that ends a stay: a move out of ``from_state`` (a transition back into
    the same step, a timeout's included, ends one stay and begins the next); not a
    failure, a halt, or an action timeout, every or entry action firing in place."""
    fired_in_place = Q(triggered_by=Trigger.TIMEOUT, from_state=F("to_state"))
    for name, step in model.workflow.steps.items():
        back = [t.name for t in step.timeouts if t.transition_to == name]
        if back:
            fired_in_place &= ~Q(from_state=name, transition_name__in=back)
    return ~Q(from_state="") & ~Q(triggered_by__in=NOT_ENTRIES) & ~fired_in_place


def ended_stays(model: Any, db: str, since: datetime, until: datetime) -> Any:
    """Each stay begun in the window that its record has left since: the row that left
    it names the step and its start, so a stay is one row. Its end, in epoch seconds,
    counts only when it came before ``until``."""
    left_at = Case(When(occurred_at__lt=until, then=EpochSeconds("occurred_at")))
    return (
        _log_rows(model, db, since, until, _leaving(model))
        .annotate(step=F("from_state"), entered=EpochSeconds("from_state_entered_at"))
        .annotate(left_at=left_at)
        .values("object_id", "step", "entered", "left_at")
    )


def current_stays(model: Any, db: str, since: datetime, until: datetime) -> Any:
    """Each record's stay in its current step, when it began in the window: open now,
    so open at ``until`` too, with the name of its zone when it names one (``""``
    otherwise). Terminal steps are only counted (``terminal_stays``)."""
    workflow = model.workflow
    state, zone_field = workflow.state_attribute, workflow.time_zone_field
    rows = _current(model, db, since, until).exclude(**{f"{state}__in": _terminal(model)})
    return rows.annotate(
        step=F(state),
        entered=EpochSeconds(STATE_ENTERED_AT),
        zone_name=F(zone_field) if zone_field else Value(""),
    ).values("step", "entered", "zone_name")


def terminal_stays(model: Any, db: str, since: datetime, until: datetime) -> Any:
    """Per terminal step, the records that entered it in the window and are there now.
    Time in a step no record leaves is only the time since it got there: no figures."""
    state = model.workflow.state_attribute
    rows = _current(model, db, since, until).filter(**{f"{state}__in": _terminal(model)})
    return rows.values(terminal_step=F(state)).annotate(stays=Count("pk"))


def _current(model: Any, db: str, since: datetime, until: datetime) -> Any:
    rows = model._base_manager.using(db).order_by()
    return rows.filter(**{f"{STATE_ENTERED_AT}__gte": since, f"{STATE_ENTERED_AT}__lt": until})


def _terminal(model: Any) -> list[str]:
    return [name for name, step in model.workflow.steps.items() if step.is_terminal]


def _sql(queryset: Any, db: str) -> tuple[str, tuple]:
    return queryset.query.get_compiler(using=db).as_sql()  # in that database's dialect


def firings(model: Any, db: str, since: datetime, until: datetime, names: list[str]) -> Any:
    """The log rows of timeouts ``names`` firing before ``until`` in stays begun in the
    window: a transition timeout's row ends the stay, an action timeout's happens in it."""
    fired = Q(triggered_by=Trigger.TIMEOUT, transition_name__in=names, occurred_at__lt=until)
    rows = _log_rows(model, db, since, until, fired)
    return rows.values("from_state", "transition_name", "object_id", "from_state_entered_at")


def _statement(
    model: Any,
    db: str,
    since: datetime,
    until: datetime,
    zones: list[str],
    days: list[tuple] | None,
) -> tuple[str, list[Any]]:
    """The report in one statement.

    Rows ``("step", step, None, stays, open, median, p90, business median, business
    p90)`` per step with stays (on PostgreSQL, per declared step too, its stays 0
    when none began), and ``("fired", step, timeout, stays)`` per timeout that fired:
    a transition timeout is what ended the stay; an action timeout's firing names the
    stay it happened in.
    """
    connection = connections[db]
    ended, ended_params = _sql(ended_stays(model, db, since, until), db)
    current, current_params = _sql(current_stays(model, db, since, until), db)
    join = _record_of_ended(model, connection, zones)
    ended_zone = "COALESCE(m.zone, 0)" if join else "0"
    business, day_joins = _business_seconds(days, connection.vendor)
    fired, fired_params = _fired_inside(model, db, since, until)
    terminal, terminal_params = _terminal_part(model, db, since, until)
    per_step, per_step_params = _per_step(connection.vendor, list(model.workflow.steps))
    sql = f"""
WITH stays AS (
    SELECT s.step, s.entered, s.left_at, {ended_zone} AS zone
    FROM ({ended}) s {join}
    UNION ALL
    SELECT c.step, c.entered, NULL, {_zone_number("c.zone_name", zones)} FROM ({current}) c
),
timed AS (
    SELECT step, entered, COALESCE(left_at, %s) AS left_at,
        CASE WHEN left_at IS NULL THEN 1 ELSE 0 END AS still_open, zone
    FROM stays
),
durations AS (
    SELECT t.step, t.still_open, t.left_at - t.entered AS seconds, {business} AS business
    FROM timed t {day_joins}
)
{per_step}{terminal}{fired}"""
    params = [*ended_params, *current_params, until.timestamp(), *per_step_params]
    return sql, [*params, *terminal_params, *fired_params]


def _terminal_part(model: Any, db: str, since: datetime, until: datetime) -> tuple[str, tuple]:
    """The part of the statement counting the open stays of terminal steps (nothing when
    the workflow has none)."""
    if not _terminal(model):
        return "", ()
    inner, params = _sql(terminal_stays(model, db, since, until), db)
    sql = f"""
UNION ALL
SELECT 'step', t.terminal_step, NULL, t.stays, t.stays, NULL, NULL, NULL, NULL
FROM ({inner}) t"""
    return sql, params


def _fired_inside(model: Any, db: str, since: datetime, until: datetime) -> tuple[str, list]:
    """The part of the statement counting, per timeout, the stays it fired in. A timeout
    counted from the entry fires at most once a stay, so its rows are counted; one
    whose anchor can move may fire again in the same stay, so its stays are."""
    once, again = _timeouts(model)
    sql, params = "", []
    for names, distinct in ((once, False), (again, True)):
        if names:
            rows = firings(model, db, since, until, names)
            inner, inner_params = _sql(rows.distinct() if distinct else rows, db)
            sql += f"""
UNION ALL
SELECT 'fired', f.from_state, f.transition_name, COUNT(*), NULL, NULL, NULL, NULL, NULL
FROM ({inner}) f GROUP BY f.from_state, f.transition_name"""
            params += inner_params
    return sql, params


def _timeouts(model: Any) -> tuple[list[str], list[str]]:
    """The names of the timeouts that fire once a stay, and of the others."""
    once, again = set(), set()
    for step in model.workflow.steps.values():
        for timeout in step.timeouts:
            (once if _once_a_stay(timeout) else again).add(timeout.name)
    return sorted(once - again), sorted(again)


def _once_a_stay(timeout: Any) -> bool:
    from_entry = timeout.fire_at is None and timeout.field in (None, STATE_ENTERED_AT)
    return bool(timeout.transition_to) or from_entry


def _per_step(vendor: str, steps: list[str]) -> tuple[str, list[str]]:
    """The per-step aggregate over ``durations``, and its parameters. PostgreSQL has
    ``percentile_cont``; SQLite gets the same figures from row numbers."""
    if vendor == "postgresql":
        return _per_step_postgresql(steps)
    percentiles = ", ".join(
        _percentile(value, rank, fraction)
        for value, rank in (("seconds", "by_seconds"), ("business", "by_business"))
        for fraction in (MEDIAN, P90)
    )
    sql = f"""SELECT 'step', step, NULL, COUNT(*), SUM(still_open), {percentiles} FROM (
    SELECT step, still_open, seconds, business,
        ROW_NUMBER() OVER (PARTITION BY step ORDER BY seconds) AS by_seconds,
        ROW_NUMBER() OVER (PARTITION BY step ORDER BY business) AS by_business,
        COUNT(*) OVER (PARTITION BY step) AS n
    FROM durations
) ranked GROUP BY step"""
    return sql, []


def _per_step_postgresql(steps: list[str]) -> tuple[str, list[str]]:
    """One pass over the stays works out every declared step's figures, each aggregate
    taking its own step's stays (``FILTER``, on the step's number: cheaper than its name
    four times a step), so no sort of every stay by step stands between the parallel
    workers and the aggregate. ``percentile_cont`` sorts each step's values once for
    both fractions. Steps only the log still names are grouped apart.

    ``OFFSET 0`` keeps the planner from pulling the numbering subquery up, which would
    copy its ``CASE`` into every filter: the number is worked out once a stay."""
    fractions = ", ".join(str(a / b) for a, b in (MEDIAN, P90))
    cont = f"percentile_cont(ARRAY[{fractions}]) WITHIN GROUP"
    columns, rows = [], []
    for n in range(len(steps)):
        mine = f"FILTER (WHERE n = {n})"
        columns.append(
            f"COUNT(*) {mine} AS stays{n}, COALESCE(SUM(still_open) {mine}, 0) AS open{n}, "
            f"{cont} (ORDER BY seconds) {mine} AS s{n}, {cont} (ORDER BY business) {mine} AS b{n}"
        )
        rows.append(f"(%s, a.stays{n}, a.open{n}, a.s{n}, a.b{n})")
    numbers = " ".join(f"WHEN %s THEN {n}" for n in range(len(steps)))
    sql = f"""SELECT 'step', v.step, NULL, v.stays, v.still_open, v.s[1], v.s[2], v.b[1], v.b[2]
FROM (
    SELECT {", ".join(columns)}
    FROM (SELECT d.*, CASE d.step {numbers} END AS n FROM durations d OFFSET 0) numbered
) a
CROSS JOIN LATERAL (VALUES {", ".join(rows)}) AS v(step, stays, still_open, s, b)
UNION ALL
SELECT 'step', step, NULL, stays, still_open, s[1], s[2], b[1], b[2] FROM (
    SELECT step, COUNT(*) AS stays, SUM(still_open) AS still_open,
        {cont} (ORDER BY seconds) AS s, {cont} (ORDER BY business) AS b
    FROM durations WHERE step NOT IN ({", ".join(["%s"] * len(steps))}) GROUP BY step
) undeclared"""
    return sql, [*steps, *steps, *steps]


def _business_seconds(days: list[tuple] | None, vendor: str) -> tuple[str, str]:
    """The SQL of a stay's business seconds and the joins it needs: its calendar seconds
    less the non-working seconds between its ends (``NULL`` without a calendar)."""
    if days is None:
        return "CAST(NULL AS DOUBLE PRECISION)", ""
    pieces = _pieces(days)
    off = f"{_off('t.left_at', 'b', pieces)} - {_off('t.entered', 'a', pieces)}"
    table = _days_table(days)
    joins = (
        f"JOIN {table} a ON a.zone_day = t.zone * {ZONE_KEY} + {_day_of('t.entered', vendor)} "
        f"JOIN {table} b ON b.zone_day = t.zone * {ZONE_KEY} + {_day_of('t.left_at', vendor)}"
    )
    return f"(t.left_at - t.entered) - ({off})", joins


def _day_of(seconds: str, vendor: str) -> str:
    """The UTC day number of epoch ``seconds``. A float a hair off a midnight may land on
    the neighbouring day: the day's count plus its pieces still give the right total."""
    if vendor == "postgresql":
        return f"CAST(floor({seconds} / {DAY}) AS INTEGER)"
    return f"CAST({seconds} / {DAY} AS INTEGER)"  # SQLite truncates; instants are after 1970


def _record_of_ended(model: Any, connection: Any, zones: list[str]) -> str:
    """The join from an ended stay to its record's zone number (``m.zone``), found by its
    key, which the log keeps as text. Only records naming one of the other zones are
    joined, their numbers worked out once each; the rest count in the workflow's zone.
    Empty when only the workflow's zone is in play."""
    if len(zones) == 1:
        return ""
    quote, pk = connection.ops.quote_name, model._meta.pk
    table = quote(model._meta.db_table)
    column = quote(model._meta.get_field(model.workflow.time_zone_field).column)
    others = ", ".join(f"'{_literal(name)}'" for name in zones[1:])
    named = (
        f"SELECT {quote(pk.column)} AS pk, {_zone_number(column, zones)} AS zone "
        f"FROM {table} WHERE {column} IN ({others})"
    )
    return f"LEFT JOIN ({named}) m ON {_same_key('m.pk', pk, connection)}"


def _zone_number(column: str, zones: list[str]) -> str:
    """SQL of a zone name ``column`` as its number in ``zones`` (0, the workflow's, for
    an empty or unknown name)."""
    if len(zones) == 1:
        return "0"
    cases = " ".join(f"WHEN '{_literal(name)}' THEN {n}" for n, name in enumerate(zones) if n)
    return f"CASE {column} {cases} ELSE 0 END"


def _literal(zone: str) -> str:
    """A zone name inside the statement: ``_zones`` checked it is one zoneinfo knows."""
    return zone.replace("'", "''")


def _same_key(key: str, pk: Any, connection: Any) -> str:
    """The log's ``object_id`` read as the key's type when it is a whole number or a
    UUID, so the join uses the primary key's index (SQLite has no hash join); other keys
    as text. SQLite keeps a UUID as 32 hex digits, the log as ``str(uuid)``."""
    kind = pk.get_internal_type()
    if kind in INTEGER_KEYS or (kind == "UUIDField" and connection.vendor == "postgresql"):
        return f"{key} = CAST(s.object_id AS {pk.rel_db_type(connection)})"
    if kind == "UUIDField":
        return f"{key} = REPLACE(s.object_id, '-', '')"
    return f"CAST({key} AS TEXT) = s.object_id"


def _days_table(days: list[tuple]) -> str:
    """The calendar days as a VALUES list of whole numbers, in the statement itself:
    the planner sees its size, no parameter limit applies, and nothing in it comes
    from outside."""
    names = ["zone_day", "before"] + [f"{e}{i}" for i in range(1, _pieces(days) + 1) for e in "se"]
    # VALUES columns are column1, column2, ... on both databases.
    columns = ", ".join(f"column{n} AS {name}" for n, name in enumerate(names, start=1))
    values = ", ".join("(" + ", ".join(str(int(v)) for v in row) + ")" for row in days)
    return f"(SELECT {columns} FROM (VALUES {values}) AS v)"


def _pieces(days: list[tuple]) -> int:
    """How many non-working pieces each row of the day table carries."""
    return (len(days[0]) - 2) // 2


def _off(instant: str, day: str, pieces: int) -> str:
    """Non-working seconds before ``instant``: its day's count plus the part of the day's
    pieces that lies before it."""
    parts = [f"{day}.before"]
    for i in range(1, pieces + 1):
        s, e = f"{day}.s{i}", f"{day}.e{i}"
        parts.append(
            f"CASE WHEN {instant} > {s} THEN "
            f"(CASE WHEN {instant} < {e} THEN {instant} ELSE {e} END) - {s} ELSE 0 END"
        )
    return "(" + " + ".join(parts) + ")"


def _percentile(value: str, rank: str, fraction: tuple[int, int]) -> str:
    """The percentile by linear interpolation between ranks (what PostgreSQL's
    ``percentile_cont`` gives): at rank ``h = 1 + (n - 1) p``, the value of rank
    ``floor(h)`` plus the fraction of ``h`` times the step to the next rank."""
    a, b = fraction
    whole = f"(((n - 1) * {a}) / {b})"
    part = f"((((n - 1) * {a}) %% {b}) * 1.0 / {b})"
    return (
        f"SUM(CASE WHEN {rank} = 1 + {whole} THEN {value} * (1 - {part}) "
        f"WHEN {rank} = 2 + {whole} THEN {value} * {part} ELSE 0 END)"
    )


# Assembling the figures ---------------------------------------------------------------


def _figures(
    model: Any, per_step: dict[str, tuple], fired: dict[tuple[str, str], int], business: bool
) -> list[StepFigures]:
    """Per step in declaration order (then steps only the log still names), the figures
    in hours and the timeouts' breach rates."""
    workflow = model.workflow
    names = [*workflow.steps, *sorted(set(per_step) - set(workflow.steps))]
    return [_step_figures(model, name, per_step.get(name), fired, business) for name in names]


def _step_figures(
    model: Any, name: str, row: tuple | None, fired: dict, business: bool
) -> StepFigures:
    step = model.workflow.steps.get(name)
    stays, still_open = (int(row[0]), int(row[1])) if row else (0, 0)
    seconds = row[2:6] if row else (None,) * 4
    # To the millisecond: SQLite's instants are floats, a few microseconds off.
    hours = [None if value is None or not stays else round(value, 3) / 3600 for value in seconds]
    if step is not None and step.is_terminal:
        hours = [None] * 4
    if not business:
        hours[2:] = [None, None]
    timeouts = tuple(
        TimeoutFigures(
            timeout.name,
            "transition" if timeout.transition_to else "action",
            count := fired.get((name, timeout.name), 0),
            count / stays if stays else None,
        )
        for timeout in (step.timeouts if step else ())
    )
    return StepFigures(
        step=name,
        label=str(model.workflow.step_label(name)) if step else name,
        stays=stays,
        open=still_open,
        median_hours=hours[0],
        p90_hours=hours[1],
        median_business_hours=hours[2],
        p90_business_hours=hours[3],
        timeouts=timeouts,
        declared=step is not None,
    )
