"""A Prometheus scrape of ``django_workflow.metrics.MetricsView`` at a million records.

What it measures, on PostgreSQL: ``BENCH_ROWS`` records (default 1,000,000) of one
order workflow a few years old — an automatic step (``syncing``, 0.5 %), a manual
step with a 2-day reminder and a 7-day escalation (``review``, 4 %), ``escalated``
(0.5 %), and the terminal ``done`` (80 %) and ``rejected`` (15 %) — each with the
``next_due_at`` the engine stores for it (the reminder's due instant until it
fired, then the escalation's). A backlog is left for the gauges to find: one
review in ten whose reminder came due and has not fired (overdue, with a due
lag), and one syncing record in ten halted (its attempt row ``halted``). Rows are
written by ``INSERT … SELECT`` over ``generate_series`` into emptied tables
(untimed), then ``VACUUM ANALYZE``. Before the rounds, every gauge is checked against
counts taken straight from the table.

Sides, each ``BENCH_SCRAPES`` times (default 30) after warm-up scrapes, every one a
``GET`` of the view with a bearer token that reads the gauges of every workflow
model of the benchmark app (the one above, and the benchmarks' others, empty) and
renders them:

1. a scrape with ``METRICS_CACHE = 0``, the terminal steps' counts kept (what 59
   of 60 scrapes every 15 s do with the defaults); target < 50 ms;
2. a scrape that reads the terminal steps' counts too (``METRICS_TERMINAL_CACHE =
   0``: the one scrape in 60);
3. their average for a scrape every 15 s with the defaults (``METRICS_TERMINAL_CACHE``
   900 s / 15 s); target < 50 ms;
4. a scrape within ``METRICS_CACHE`` seconds of the last;
5. the gauges of the million-record model alone (``read_figures``, the terminal
   counts kept): what the million records cost, without the other models' parts of
   the statements (each model adds a few index lookups, whatever its size); target
   < 50 ms.

Then the query plans of the statements a scrape sends to PostgreSQL (``EXPLAIN
(ANALYZE, BUFFERS)``): in one ``UNION ALL`` per database, the state index alone for
the records in moving steps, the ``next_due_at`` index for the overdue records and
the lag, the primary key for the halted ones.

    scripts/bench.sh benchmarks/metrics.py
    BENCH_ROWS=100000 .venv/bin/python benchmarks/metrics.py   (after scripts/postgres.sh start)
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("metrics")

import django

django.setup()

from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connections
from django.test import RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from benchmarks import common
from django_workflow import Retry, Step, Timeout, Transition, WorkflowModel
from django_workflow.conf import DEFAULTS
from django_workflow.models import WorkAttempt
from django_workflow.report import gauges
from django_workflow.web import prometheus

ALIAS = "postgres"
ROWS = int(os.environ.get("BENCH_ROWS", 1_000_000))
SCRAPES = int(os.environ.get("BENCH_SCRAPES", 30))
TARGET_MS = 50.0
TOKEN = "bench"


class ScrapedOrder(WorkflowModel):
    """The benchmark's workflow: an automatic step, deadlines of both kinds, end steps."""

    class Meta:
        app_label = "benchapp"

    class Workflow:
        syncing = Step(action="sync", on_success="review", retry=Retry(max_attempts=3))
        review = Step(
            Transition("approve", to="done"),
            Transition("reject", to="rejected"),
            Timeout("reminder", fire_after="2d", action="remind"),
            Timeout("escalation", fire_after="7d", transition_to="escalated"),
        )
        escalated = Step(Transition("approve", to="done"))
        done = Step()
        rejected = Step()

    def sync(self):
        pass

    def remind(self):
        pass


def create_tables():
    for alias in (ALIAS, "default"):  # a few benchmark models live on SQLite
        call_command("migrate", database=alias, verbosity=0)
    connection = connections[ALIAS]
    if ScrapedOrder._meta.db_table not in connection.introspection.table_names():
        with connection.schema_editor() as editor:
            editor.create_model(ScrapedOrder)


def build(now):
    """``ROWS`` orders by one ``INSERT … SELECT``; halted attempt rows for some."""
    table = ScrapedOrder._meta.db_table
    content_type = ContentType.objects.db_manager(ALIAS).get_for_model(ScrapedOrder).pk
    # Per g, by g % 200: a step (0.5 % syncing, 4 % review, 0.5 % escalated, 80 % done,
    # 15 % rejected); an entry up to 7 days back (a review: the escalation would have
    # moved it later), 3 years for the rest; a review's reminder fired 37 s after it
    # came due, unless g % 2000 = 7 (the backlog). One syncing record in ten halted.
    step = (
        "CASE WHEN g %% 200 = 0 THEN 'syncing' WHEN g %% 200 < 9 THEN 'review' "
        "WHEN g %% 200 = 9 THEN 'escalated' WHEN g %% 200 < 170 THEN 'done' "
        "ELSE 'rejected' END"
    )
    back = "CASE WHEN g %% 200 < 10 THEN 604000 ELSE 94608000 END"
    entered = f"(%(now)s - make_interval(secs => (g::bigint * 7919) %% ({back})))"
    fired = (
        f"CASE WHEN g %% 200 BETWEEN 1 AND 8 AND g %% 2000 <> 7 "
        f"AND {entered} + interval '2 days' <= %(now)s "
        f"THEN {entered} + interval '2 days 37 seconds' END"
    )
    with connections[ALIAS].cursor() as cursor:
        # Emptied, not deleted from: a million dead rows left by the last run would keep
        # their index entries, and every run would measure the runs before it.
        cursor.execute(f"TRUNCATE {table}, django_workflow_workattempt")
        cursor.execute(
            f"INSERT INTO {table} (id, state, state_entered_at, review_reminder_fired_at) "
            f"SELECT g, {step}, {entered}, {fired} FROM generate_series(1, %(rows)s) AS s(g)",
            {"now": now, "rows": ROWS},
        )
        cursor.execute(
            f"UPDATE {table} SET next_due_at = CASE "
            "WHEN review_reminder_fired_at IS NULL THEN state_entered_at + interval '2 days' "
            "ELSE state_entered_at + interval '7 days' END WHERE state = 'review'"
        )
        cursor.execute(
            "INSERT INTO django_workflow_workattempt (content_type_id, object_id, work, "
            "round_key, attempts, interruptions, halted, last_error, holder, updated_at) "
            f"SELECT {content_type}, id::text, 'step:syncing', state_entered_at, 3, 0, true, "
            f"'refused', '', %(now)s FROM {table} WHERE state = 'syncing' AND id %% 2000 = 0",
            {"now": now},
        )
        for name in (table, "django_workflow_workattempt"):
            cursor.execute(f"VACUUM ANALYZE {name}")


def scrape():
    request = RequestFactory().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    response = prometheus.MetricsView.as_view()(request)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def check(now):
    """Every gauge of the big model at ``now`` equals a count taken from the table here."""
    figures = gauges.model_figures(ScrapedOrder, now)
    rows = ScrapedOrder.objects.using(ALIAS)
    for found in figures.steps:
        in_step = rows.filter(state=found.step)
        assert found.records == in_step.count(), found
        assert found.overdue == in_step.filter(next_due_at__lte=now).count(), found
    halted = WorkAttempt.objects.using(ALIAS).filter(halted=True).count()
    assert figures.halted == halted > 0
    oldest = rows.filter(next_due_at__lte=now).order_by("next_due_at").first().next_due_at
    assert figures.due_lag_seconds == (now - oldest).total_seconds() > 0
    return {
        "records": sum(step.records for step in figures.steps),
        "in moving steps": sum(
            s.records for s in figures.steps if s.step in gauges.moving_steps(ScrapedOrder)
        ),
        "overdue": sum(step.overdue for step in figures.steps),
        "halted": halted,
        "due lag (s)": int(figures.due_lag_seconds),
    }


def timed(function, times):
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return samples


def counted(function):
    """How many queries ``function()`` sends to either database."""
    big, small = (
        CaptureQueriesContext(connections[ALIAS]),
        CaptureQueriesContext(connections["default"]),
    )
    with big, small:
        function()
    return len(big) + len(small)


def plans():
    """``EXPLAIN (ANALYZE, BUFFERS)`` of the statements a scrape reading the terminal counts
    too sends to PostgreSQL (every workflow model there, the big one among them)."""
    connection = connections[ALIAS]
    with settings(0, 0), CaptureQueriesContext(connection) as captured:
        scrape()
    for query in captured.captured_queries:
        sql = query["sql"]
        print(f"\n  {shortened(sql)}")
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}")
            for (line,) in cursor.fetchall():
                print(f"    {shortened(line)}")


def shortened(text, width=160):
    """A line of a plan or a statement, its long key lists cut."""
    return text if len(text) <= width else f"{text[:width]} …"


def settings(cache, terminal):
    return override_settings(
        DJANGO_WORKFLOW={
            "METRICS_CACHE": cache,
            "METRICS_TERMINAL_CACHE": terminal,
            "METRICS_TOKEN": TOKEN,
        }
    )


def main():
    print(f"A metrics scrape, {ROWS:,} records on PostgreSQL.")
    print(common.machine())
    common.use(ALIAS)
    create_tables()
    now = timezone.now()
    started = time.perf_counter()
    build(now)
    print(f"rows built in {time.perf_counter() - started:.0f} s (untimed below)")
    figures = check(timezone.now())
    print("checked against the table: " + ", ".join(f"{k} {v:,}" for k, v in figures.items()))
    models = len(gauges.workflow_models())
    with settings(0, 3600):  # every scrape reads the gauges; terminal counts kept
        timed(scrape, 5)  # warm: plans, buffers
        scrapes = timed(scrape, SCRAPES)
        queries = counted(scrape)
        settled = gauges.settled_records([ScrapedOrder])
        alone = timed(
            lambda: gauges.read_figures([ScrapedOrder], timezone.now(), settled),
            SCRAPES,
        )
    with settings(0, 0):  # the scrape that reads the terminal counts again too
        timed(scrape, 2)
        full = timed(scrape, SCRAPES)
    with settings(3600, 3600):
        scrape()
        cached = timed(scrape, SCRAPES)
    # a 15 s scrape reads the terminal counts once in this many (the default setting)
    every = DEFAULTS["METRICS_TERMINAL_CACHE"] // 15
    amortised = [(a * (every - 1) + b) / every for a, b in zip(scrapes, full, strict=True)]
    print(f"\n{SCRAPES} scrapes each; median [min-max], milliseconds; {models} workflow models")
    rows = (
        ("scrape (terminal counts kept)", scrapes, True),
        ("scrape reading the terminal counts too", full, False),
        ("a 15 s scrape on average (defaults)", amortised, True),
        ("scrape within METRICS_CACHE", cached, False),
        ("the 1M-record model's gauges alone", alone, True),
    )
    for title, values, targeted in rows:
        target = ""
        if targeted:
            mark = common.verdict(common.med(values) * 1000 < TARGET_MS)
            target = f"   target < {TARGET_MS:.0f} ms  {mark}"
        print(f"  {title:<40}{common.spread(values, 1000):>24}{target}")
    print(f"\na scrape (terminal counts kept) sends {queries} queries")
    print("\nQuery plans of a scrape's statements on PostgreSQL (terminal counts included):")
    plans()
    connections.close_all()


if __name__ == "__main__":
    main()
    print(f"\nmachine at the end: {common.machine()}")
