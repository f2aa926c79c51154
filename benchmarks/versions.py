"""Versions on PostgreSQL: what declaring them costs, and what an upgrade costs.

Three sides, each against its peer in the same run, rounds alternated, medians
[min-max]:

1. manual transition: ``record.transition("flip"/"flop")`` on ``Spanned`` (three
   versions declared, the records on the current one, then on the oldest) against
   ``Single`` (the current version's declaration on a model without versions), the
   models taking turns record by record over ``BENCH_TRANSITIONS`` records (default
   500) spread over each table; target <= 1.05x;
2. idle tick at ``BENCH_ROWS`` rows each (default 1,000,000; ``Spanned``'s spread over
   its three versions, every deadline due by ``NOW`` already fired, nothing due):
   ``polling.poll(label, every work name, now=NOW)``; target <= 1.1x;
3. upgrade of ``BENCH_UPGRADE_ROWS`` ``Upgraded`` records (default 100,000) from
   version 1 to 2: ``manage.py workflow_upgrade benchapp.Upgraded --to 2`` against a
   hand-written psycopg loop doing the same writes a batch of 500 at a time, each batch
   one prepared statement in its own transaction (the version and the due instant
   updated, computed in SQL, and the log rows inserted from the ``UPDATE``'s
   ``RETURNING``); records per second; target >= 0.5x. The table and the log are
   restored between rounds. ``BENCH_PROFILE=1`` prints a cProfile of the command.
   Shown beside them, no target: the command while a deadline of the table waits for
   its retry, which makes it read and lock each batch and compute the due instants in
   Python, as it does for business days.

    make bench BENCHMARKS=benchmarks/versions.py
    BENCH_ROWS=100000 BENCH_UPGRADE_ROWS=20000 make bench BENCHMARKS=benchmarks/versions.py
"""

import os
import sys
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("versions")

import django

django.setup()

import psycopg
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connections

from benchmarks import common
from benchmarks.benchapp.models import Single, Spanned, Upgraded
from benchmarks.many_deadlines import ALIAS, chosen, idle, paired_rounds, transitions
from django_workflow.engine.rescheduling import reschedule
from django_workflow.models import TransitionLog, WorkAttempt

UPGRADE_ROWS = int(os.environ.get("BENCH_UPGRADE_ROWS", 100_000))
BATCH = 500


def spread_over_versions(index, rng):
    """Half the records open for under a day (nothing of theirs due by ``NOW``), half
    closed; a third on each version."""
    hours = rng.uniform(1, 20) if index % 2 == 0 else rng.uniform(1, 720)
    return {
        "state": "open" if index % 2 == 0 else "closed",
        "state_entered_at": common.on_minute(common.NOW - common.timedelta(hours=hours)),
        "workflow_version": 1 + index % 3,
    }


def unversioned(index, rng):
    values = spread_over_versions(index, rng)
    del values["workflow_version"]
    return values


def on_version(model, number):
    """Put the records the transitions take on version ``number`` (the same records)."""
    rows = model.objects.using(ALIAS).filter(pk__in=chosen(model))
    rows.update(workflow_version=number)  # a due instant per version: recomputed below
    reschedule(model, list(rows.values_list("pk", flat=True)), ALIAS, common.NOW)


# The upgrade -------------------------------------------------------------------------


def upgrade_rows(index, rng):
    """A record entered in the last three days on version 1, half with the reminder fired."""
    entered = common.on_minute(common.NOW - common.timedelta(hours=rng.uniform(1, 71)))
    return {"state": "open", "state_entered_at": entered, "workflow_version": 1}


def keep_original(table):
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {table}_original")
        cursor.execute(f"CREATE TABLE {table}_original AS SELECT * FROM {table}")


def restore(table, content_type):
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(f"TRUNCATE {table}")
        cursor.execute(f"INSERT INTO {table} SELECT * FROM {table}_original")
        cursor.execute(
            f"DELETE FROM {TransitionLog._meta.db_table} WHERE content_type_id = %s",
            [content_type],
        )
        cursor.execute(f"VACUUM ANALYZE {table}")


def ours():
    call_command("workflow_upgrade", "benchapp.Upgraded", "--to", "2", stdout=StringIO())


def raw(content_type):
    """The same writes by hand: per batch, one statement updating the version and the due
    instant (the reminder at one day, else the lapse at two) and logging each row."""
    settings = connections[ALIAS].settings_dict
    table, log = Upgraded._meta.db_table, TransitionLog._meta.db_table
    statement = (
        f"WITH moved AS (UPDATE {table} SET workflow_version = 2, next_due_at = CASE "
        "WHEN open_remind_fired_at IS NULL THEN state_entered_at + interval '1 day' "
        "ELSE state_entered_at + interval '2 days' END "
        "WHERE id = ANY(%s) AND workflow_version = 1 RETURNING id, state, state_entered_at) "
        f"INSERT INTO {log} (content_type_id, object_id, from_state, to_state, "
        "transition_name, triggered_by, occurred_at, from_state_entered_at, actor_repr, "
        "error, comment, data) SELECT %s, id::text, state, state, 'upgrade', 'upgrade', "
        "now(), state_entered_at, '', '', '', %s::jsonb FROM moved"
    )
    data = '{"from_version": 1, "to_version": 2}'

    def run():
        with psycopg.connect(
            host=settings["HOST"],
            port=settings["PORT"],
            user=settings["USER"],
            dbname=settings["NAME"],
        ) as connection:
            keys = [row[0] for row in connection.execute(
                f"SELECT id FROM {table} WHERE workflow_version = 1 ORDER BY id"
            )]  # fmt: skip
            connection.commit()
            for start in range(0, len(keys), BATCH):
                with connection.transaction():
                    batch = keys[start : start + BATCH]
                    connection.execute(statement, [batch, content_type, data], prepare=True)
            connection.commit()

    return run


def read_and_locked(content_type):
    """``ours`` while a deadline of the table waits for its retry: each batch is then read,
    locked and its due instants computed in Python (the path for business days too)."""

    def run():
        waiting = WorkAttempt.objects.using(ALIAS).create(
            content_type_id=content_type, object_id="0", work="timeout:open.remind",
            round_key=common.NOW, attempts=1, retry_at=common.NOW,
        )  # fmt: skip
        try:
            ours()
        finally:
            waiting.delete()

    return run


def upgrades():
    common.load(Upgraded, ALIAS, UPGRADE_ROWS, make=upgrade_rows)
    table = Upgraded._meta.db_table
    content_type = ContentType.objects.db_manager(ALIAS).get_for_model(Upgraded).pk
    keep_original(table)
    timed = {
        "workflow_upgrade": ours,
        "raw psycopg": raw(content_type),
        "read and locked": read_and_locked(content_type),
    }

    def side(function):
        def run():
            restore(table, content_type)
            started = common.time.perf_counter()
            function()
            seconds = common.time.perf_counter() - started
            moved = Upgraded.objects.using(ALIAS).filter(workflow_version=2).count()
            assert moved == UPGRADE_ROWS, moved
            logged = TransitionLog.objects.using(ALIAS).filter(content_type_id=content_type)
            assert logged.count() == UPGRADE_ROWS
            return UPGRADE_ROWS / seconds

        return run

    results = common.alternate({label: side(f) for label, f in timed.items()}, rounds=3)
    restore(table, content_type)
    if common.profiling():
        print("cProfile, workflow_upgrade:")
        common.profile(ours, top=25)
        restore(table, content_type)
    return results


def main():
    print(f"machine: {common.machine()}")
    common.use(ALIAS)
    call_command("migrate", database=ALIAS, verbosity=0)
    for model, make in ((Spanned, spread_over_versions), (Single, unversioned)):
        seconds = common.load(model, ALIAS, common.ROWS, make=make)
        checked = common.verify(model, ALIAS, common.ROWS)
        print(f"{model.__name__}: {common.ROWS:,} rows ready in {seconds:.0f} s, {checked} checked")
    ticks = common.alternate({"3 versions": idle(Spanned), "no versions": idle(Single)})
    on_version(Spanned, 3)
    current = paired_rounds(transitions({"3 versions": Spanned, "no versions": Single}))
    on_version(Spanned, 1)
    oldest = paired_rounds(transitions({"3 versions": Spanned, "no versions": Single}))
    moved = upgrades()
    print()
    print(f"PostgreSQL, median [min-max] of the rounds; {common.ROWS:,} rows each")
    for title, results, unit, target in (
        ("idle tick (poll, nothing due)", ticks, "µs", 1.1),
        ("manual transition, records on the current version", current, "µs", 1.05),
        ("manual transition, records on the oldest version", oldest, "µs", None),
    ):
        print(f"  {title}")
        for label, values in results.items():
            print(f"    {label:<14}{common.spread(values, 1e6):>32} {unit}")
        ratio = common.med(results["3 versions"]) / common.med(results["no versions"])
        mark = f"   target <= {target:.2f}  {common.verdict(ratio <= target)}" if target else ""
        print(f"    ratio 3 / none {ratio:6.2f}{mark}")
    print(f"  upgrade of {UPGRADE_ROWS:,} records from version 1 to 2, records per second")
    for label, values in moved.items():
        print(f"    {label:<18}{common.spread(values, digits=0):>32}")
    ratio = common.med(moved["workflow_upgrade"]) / common.med(moved["raw psycopg"])
    print(f"    ratio ours / raw {ratio:6.2f}   target >= 0.50  {common.verdict(ratio >= 0.5)}")
    locked = common.med(moved["read and locked"]) / common.med(moved["raw psycopg"])
    print(f"    ratio read and locked / raw {locked:6.2f}")
    connections.close_all()


if __name__ == "__main__":
    main()
    print(f"machine at the end: {common.machine()}")
