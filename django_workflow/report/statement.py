"""The time-in-step report as one SQL statement, on SQLite and PostgreSQL alike: the
stays (``stays.py``) with their calendar and business seconds, their percentiles per
step, and per timeout the stays it fired in. No log row is loaded into Python."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connections

from ..model.columns import STATE_ENTERED_AT
from .stays import (
    current_stays,
    ended_stays,
    firings,
    terminal_stays,
    terminal_steps,
)
from .working_days import DAY, ZONE_KEY

#: Percentiles as exact fractions (numerator, denominator), so SQL can split ranks.
MEDIAN, P90 = (1, 2), (9, 10)
INTEGER_KEYS = {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField"}


def _sql(queryset: Any, db: str) -> tuple[str, tuple]:
    return queryset.query.get_compiler(using=db).as_sql()  # in that database's dialect


def statement(
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
    if not terminal_steps(model):
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
