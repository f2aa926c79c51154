"""Bulk moves against transition timeouts: the same rows, the same move, two paths.

What it measures, on PostgreSQL then SQLite: ``BENCH_BULK`` records (default
10,000) of ``Lapse`` waiting in ``pending`` among ``BENCH_ROWS`` rows (default
100,000; the rest already ``expired``), each side moving all of them to
``expired``:

- ``timeout``: ``polling.poll("benchapp.Lapse", works, now=NOW)``: the
  ``lapse`` timeout (``fire_after="1d"``) is due for every waiting record; the
  poll reads them from the ``next_due_at`` index and moves them in batches of
  guarded UPDATEs, a log row each;
- ``QuerySet.transition``: ``Lapse.objects.filter(state="pending")
  .transition("expire")``: each record decided as ``record.expire()`` would
  decide it, then moved in guarded batch UPDATEs, a log row each, and an
  outcome per record.

Between sides the rows are put back (one UPDATE, the log emptied, the table
vacuumed). Sides alternate per round; records/s, median [min-max]. Target:
QuerySet.transition >= 0.5x the timeout's rate.

    make bench BENCHMARKS=benchmarks/bulk.py
"""

import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("bulk")

import django

django.setup()

from django.core.management import call_command
from django.db import connections

from benchmarks import common
from benchmarks.benchapp.models import Lapse
from django_workflow.models import TransitionLog
from django_workflow.worker.schedulers.polling import poll

BULK = int(os.environ.get("BENCH_BULK", 10_000))
ROWS = int(os.environ.get("BENCH_ROWS", 100_000))
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")
ENTERED = common.NOW - timedelta(days=2)


def build(alias):
    """``ROWS`` rows, all expired; ``put_back`` then makes the first ``BULK`` wait, due."""
    rows = Lapse.objects.using(alias)
    rows.all().delete()
    for start in range(0, ROWS, 10_000):
        rows.bulk_create([Lapse() for _ in range(min(10_000, ROWS - start))], batch_size=2_000)
    Lapse._base_manager.using(alias).update(state="expired", next_due_at=None)
    first = list(rows.order_by("pk").values_list("pk", flat=True)[:BULK])
    return min(first), max(first)


def put_back(alias, first, last):
    connection = connections[alias]
    ops = connection.ops
    table = Lapse._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET state = 'pending', state_entered_at = %s, next_due_at = %s "
            "WHERE id BETWEEN %s AND %s",
            [
                ops.adapt_datetimefield_value(ENTERED),
                ops.adapt_datetimefield_value(ENTERED + timedelta(days=1)),
                first,
                last,
            ],
        )
        cursor.execute(f"DELETE FROM {TransitionLog._meta.db_table}")
        cursor.execute(f"VACUUM {table}" if connection.vendor == "postgresql" else "SELECT 1")


def timeout_side():
    names = [work.name for work in Lapse.workflow.works]

    def move():
        started = time.perf_counter()
        moved = sum(poll("benchapp.Lapse", names, now=common.NOW).values())
        elapsed = time.perf_counter() - started
        assert moved == BULK, f"the timeout moved {moved} of {BULK}"
        return moved / elapsed

    return move


def bulk_side(alias):
    def move():
        started = time.perf_counter()
        outcomes = Lapse.objects.using(alias).filter(state="pending").transition("expire")
        elapsed = time.perf_counter() - started
        assert list(outcomes.values()) == ["expired"] * BULK, "QuerySet.transition fell short"
        return BULK / elapsed

    return move


def run(alias):
    common.use(alias)
    call_command("migrate", database=alias, verbosity=0)
    vendor = connections[alias].vendor
    first, last = build(alias)
    put_back(alias, first, last)
    print(f"{vendor}: {ROWS:,} rows, {BULK:,} waiting and due")
    rates = common.alternate(
        {"timeout": timeout_side(), "QuerySet.transition": bulk_side(alias)},
        between=lambda label: put_back(alias, first, last),
    )
    print(f"{vendor}: records moved per second, median [min-max] of {common.ROUNDS} rounds")
    for label, values in rates.items():
        print(f"  {label:<22}{common.spread(values, digits=0):>24}")
    ratio = common.med(rates["QuerySet.transition"]) / common.med(rates["timeout"])
    print(f"  transition / timeout {ratio:6.2f}   target >= 0.50  {common.verdict(ratio >= 0.5)}")
    if common.profiling():
        print("cProfile, QuerySet.transition:")
        common.profile(bulk_side(alias))
        put_back(alias, first, last)
    connections.close_all()


def main():
    print(f"machine: {common.machine()}")
    for alias in DATABASES:
        run(alias)
        print()


if __name__ == "__main__":
    main()
    print(f"machine at the end: {common.machine()}")
