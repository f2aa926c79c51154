"""The time-in-step report (``django_workflow.report.time_in_step``) on a million log rows.

What it measures: one call of the report, the path ``manage.py workflow_report``
and the admin overview take, for a whole year of an appeals workflow whose
transition log holds ``BENCH_ROWS`` rows (default 1,000,000): ``BENCH_ROWS / 5``
appeals, five log rows each, every row inside the window, so each row is read.
Worst case for the report's joins: a third of the appeals in the workflow's
zone (Zagreb), a third in New York, a third in Tokyo (``time_zone_field``), each
zone with the year's weekends and three holidays, so business hours join every
stay to its record's zone and to its zone's day table; every appeal has
timeouts to attribute. 500,000 stays are timed (review, waiting, escalated);
the 200,000 in ``decided``, a terminal step, are counted.

Two life stories, alternating by appeal:

- asked: created into ``review``, asked for more (``waiting``), answered back
  into ``review``, the reminder (an action timeout) fires there, decided;
- escalated: created into ``review``, the reminder fires, the escalation (a
  transition timeout) moves it to ``escalated``, decided.

Durations vary by appeal (minutes to days), entries are spread over the year.
Rows are written as the engine writes them, each log row with its stay's start
and each appeal with its entry into ``decided``, by one ``INSERT … SELECT`` over
``generate_series`` (SQLite: a recursive CTE) per table, the log's index in
place, then ``VACUUM ANALYZE`` (PostgreSQL) or ``ANALYZE`` (SQLite). On those rows
migration 0008 is undone and applied again, and the time it took to build the
report's indexes printed. Before the rounds, the figures are checked against the
log: each step's stays equal the count of entry rows into it, and each timeout's
firings the rows logging it.

Sides, alternated in ``BENCH_ROUNDS`` rounds (default 7, the order reversed every
other round): the report on PostgreSQL and on SQLite, same rows, over the whole
year and over its last month (December: what the admin overview's 30 days read
from a log that holds a year). The figure is the median call, [min-max] over
rounds. Target: the year on PostgreSQL under 2 s.

    make bench BENCHMARKS=benchmarks/report.py
    BENCH_ROWS=100000 .venv/bin/python benchmarks/report.py   (after scripts/postgres.sh start)
"""

import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("report")

import django

django.setup()

from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connections, models
from django.db.migrations.executor import MigrationExecutor

from benchmarks import common
from django_workflow import Step, Timeout, Transition, WorkflowModel
from django_workflow.report import time_in_step

ROWS = int(os.environ.get("BENCH_ROWS", 1_000_000))
ROUNDS = max(3, int(os.environ.get("BENCH_ROUNDS", 7)))
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")
SINCE = datetime(2026, 1, 1, tzinfo=UTC)
MONTH = datetime(2026, 12, 1, tzinfo=UTC)
UNTIL = datetime(2027, 1, 1, tzinfo=UTC)
ZONES = ("", "America/New_York", "Asia/Tokyo")
TARGET_SECONDS = 2.0


class ReportAppeal(WorkflowModel):
    """The benchmark's workflow: a zone per record, holidays, both kinds of timeout."""

    tz = models.CharField(max_length=50, blank=True)

    class Meta:
        app_label = "benchapp"

    class Workflow:
        log = True
        time_zone = "Europe/Zagreb"
        time_zone_field = "tz"
        holidays = ["2026-01-01", "2026-06-04", "2026-12-25"]

        review = Step(
            Transition("decide", to="decided"),
            Transition("ask", to="waiting"),
            Timeout("reminder", fire_after="1d", action="remind"),
            Timeout("escalation", fire_after="3d", transition_to="escalated"),
        )
        waiting = Step(Transition("answer", to="review"))
        escalated = Step(Transition("decide", to="decided"))
        decided = Step()

    def remind(self):
        pass


#: Per appeal, five rows: (position, from, to, trigger, name, hours after the previous row
#: as SQL of the appeal number g). Odd appeals are asked, even ones escalated.
STORIES = {
    1: [
        (1, "", "review", "initial", "", "0"),
        (2, "review", "waiting", "manual", "ask", "(g %% 47) / 4.0"),
        (3, "waiting", "review", "manual", "answer", "(g %% 101) + 0.5"),
        (4, "review", "review", "timeout", "reminder", "24"),
        (5, "review", "decided", "manual", "decide", "(g %% 13) * 3.0"),
    ],
    0: [
        (1, "", "review", "initial", "", "0"),
        (2, "review", "review", "timeout", "reminder", "24"),
        (3, "review", "escalated", "timeout", "escalation", "48"),
        (4, "escalated", "decided", "manual", "decide", "(g %% 89) + 0.25"),
        (5, "", "", "", "", ""),  # placeholder, replaced below: one row fewer
    ],
}


def story_rows():
    """The (parity, position, from, to, trigger, name, hours) of every row of a story;
    the escalated story's fifth row is a failure logged in ``decided`` (not an entry)."""
    rows = []
    for parity, story in STORIES.items():
        for position, source, target, trigger, name, hours in story:
            if parity == 0 and position == 5:
                source, target, trigger, name, hours = "decided", "decided", "failed", "", "1"
            rows.append((parity, position, source, target, trigger, name, hours))
    return rows


def create_tables(alias):
    call_command("migrate", database=alias, verbosity=0)
    connection = connections[alias]
    if ReportAppeal._meta.db_table not in connection.introspection.table_names():
        with connection.schema_editor() as editor:
            editor.create_model(ReportAppeal)


def build(alias, appeals):
    """Write ``appeals`` appeals and their ``5 * appeals`` log rows with bulk SQL."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    table, log = ReportAppeal._meta.db_table, "django_workflow_transitionlog"
    content_type = ContentType.objects.db_manager(alias).get_for_model(ReportAppeal).pk
    postgres = connection.vendor == "postgresql"
    series = (
        "generate_series(1, %s) AS s(g)"
        if postgres
        else "(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < %s) "
        "SELECT g FROM s) AS s"
    )
    zones = " ".join(f"WHEN {i} THEN '{zone}'" for i, zone in enumerate(ZONES))
    # Entry instant: spread over the first 330 days of the year, by the appeal's number.
    start = "((g * 7919) %% 28512000)"
    instant = (
        f"(TIMESTAMPTZ '2026-01-01 00:00:00+00' + make_interval(secs => {start} + ({{h}}) * 3600))"
        if postgres
        else f"datetime(1767225600 + {start} + ({{h}}) * 3600, 'unixepoch')"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {log} WHERE content_type_id = %s", [content_type])
        cursor.execute(f"DELETE FROM {table}")
        decided = f"CASE g %% 2 WHEN 1 THEN {_hours(1, 5)} ELSE {_hours(0, 4)} END"
        cursor.execute(
            f"INSERT INTO {table} (id, state, state_entered_at, {quote('tz')}) "
            f"SELECT g, 'decided', {instant.format(h=decided)}, CASE g %% 3 {zones} END "
            f"FROM {series}",
            [appeals],
        )
        stories = " UNION ALL ".join(
            f"SELECT {parity} AS parity, {position} AS position, '{source}' AS source, "
            f"'{target}' AS target, '{trigger}' AS trigger, '{name}' AS name"
            for parity, position, source, target, trigger, name, _ in story_rows()
        )
        cursor.execute(
            f"INSERT INTO {log} (content_type_id, object_id, from_state, to_state, "
            "transition_name, triggered_by, occurred_at, from_state_entered_at, "
            "actor_repr, error, comment) "
            f"SELECT {content_type}, CAST(g AS TEXT), r.source, r.target, r.name, r.trigger, "
            f"{instant.format(h=_by_row(_hours))}, {instant.format(h=_by_row(_stay_start))}, "
            f"'', '', '' FROM {series} JOIN ({stories}) r ON r.parity = g %% 2 "
            "ORDER BY g, r.position",
            [appeals],
        )
        for name in (log, table):
            cursor.execute(f"VACUUM ANALYZE {name}" if postgres else f"ANALYZE {name}")


def time_indexes(alias):
    """Seconds migration 0008 takes to build the report's log indexes on these rows
    (docs/upgrading.md): back to 0007, then forward, timed."""
    connection = connections[alias]
    MigrationExecutor(connection).migrate([("django_workflow", "0007_log_stay_start")])
    started = time.perf_counter()
    MigrationExecutor(connection).migrate([("django_workflow", "0008_log_report_indexes")])
    seconds = time.perf_counter() - started
    call_command("migrate", database=alias, verbosity=0)  # whatever came after it
    return seconds


def _story(parity):
    return [row for row in story_rows() if row[0] == parity]


def _hours(parity, position):
    """SQL of the hours after the appeal's creation at which row ``position`` of its story
    was written: the sum of the story's steps so far."""
    return " + ".join(f"({row[6]})" for row in _story(parity)[:position])


def _stay_start(parity, position):
    """SQL of the hours at which the stay row ``position`` ends or happens in began: the
    latest earlier row that entered a step (none for the creation)."""
    earlier = [row for row in _story(parity)[: position - 1] if _enters(row)]
    return _hours(parity, earlier[-1][1]) if earlier else "NULL"


def _enters(row):
    _, _, source, target, trigger, *_ = row
    return trigger != "failed" and not (trigger == "timeout" and source == target)


def _by_row(hours):
    """``hours(parity, position)`` as SQL of the joined story row ``r``."""
    cases = " ".join(
        f"WHEN r.parity = {parity} AND r.position = {position} THEN {hours(parity, position)}"
        for parity, position, *_ in story_rows()
    )
    return f"CASE {cases} END"


def check(alias, report):
    """Each step's stays are its entry rows; each timeout's firings its log rows."""
    entries = {"review": ROWS // 5 + ROWS // 10, "waiting": ROWS // 10}
    entries.update(escalated=ROWS // 10, decided=ROWS // 5)
    stays = {figures.step: figures.stays for figures in report.steps}
    assert stays == entries, (alias, stays, entries)
    review = next(f for f in report.steps if f.step == "review")
    fired = {t.name: t.fired for t in review.timeouts}
    assert fired == {"reminder": ROWS // 5, "escalation": ROWS // 10}, (alias, fired)
    timed = [f for f in report.steps if f.median_hours is not None]
    assert [f.step for f in timed] == ["review", "waiting", "escalated"], timed
    assert all(f.median_business_hours <= f.median_hours for f in timed)


def run_report(alias, since=SINCE):
    started = time.perf_counter()
    report = time_in_step(ReportAppeal, since, UNTIL, using=alias)
    return time.perf_counter() - started, report


def main():
    assert ROWS % 10 == 0, "BENCH_ROWS must be a multiple of 10"
    print(f"The time-in-step report, {ROWS:,} log rows ({ROWS // 5:,} appeals, 3 zones).")
    print(common.machine())
    for alias in DATABASES:
        create_tables(alias)
        started = time.perf_counter()
        build(alias, ROWS // 5)
        built = time.perf_counter() - started
        indexes = time_indexes(alias)
        _, report = run_report(alias)  # warm: plans, caches
        check(alias, report)
        print(
            f"{connections[alias].vendor}: rows built in {built:.0f} s; migration 0008 "
            f"built the report's indexes on them in {indexes:.1f} s"
        )
    sides = {
        (alias, window): (lambda alias=alias, since=since: run_report(alias, since)[0])
        for alias in DATABASES
        for window, since in (("year", SINCE), ("December", MONTH))
    }
    results = common.alternate(sides, rounds=ROUNDS)
    print(f"\n{ROUNDS} rounds, alternated; median call [min-max], seconds")
    for (alias, window), values in results.items():
        vendor = connections[alias].vendor
        verdict = ""
        if vendor == "postgresql" and window == "year":
            met = common.verdict(common.med(values) < TARGET_SECONDS)
            verdict = f"  target < {TARGET_SECONDS:.0f} s  {met}"
        label = f"{vendor}, {window}"
        print(f"  {label:<22}{common.spread(values, digits=2):>20}{verdict}")
    _, report = run_report(DATABASES[0])
    print("\nThe figures (hours):")
    for f in report.steps:
        hours = [f.median_hours, f.p90_hours, f.median_business_hours, f.p90_business_hours]
        median, p90, business_median, business_p90 = (
            "      -" if value is None else f"{value:7.1f}" for value in hours
        )
        print(
            f"  {f.step:<10} {f.stays:>8,} stays  median {median}  p90 {p90}  "
            f"business median {business_median}  p90 {business_p90}"
        )


if __name__ == "__main__":
    main()
