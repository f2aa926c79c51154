"""Action timeouts fired record by record, against a hand-written per-record firing.

Each record's action and fired column commit in a transaction of their own.
Measured on PostgreSQL and on SQLite, in alternated rounds, each on the same
DUE records past a no-op action timeout:

- django_workflow: ``run_work`` for the timeout (what a poll runs in a worker);
- hand-written: per record BEGIN; SELECT … ORDER BY anchor LIMIT 1 FOR UPDATE
  SKIP LOCKED; call the action; UPDATE the fired column; COMMIT.

While ``run_work`` fires, another connection updates an unrelated row every
millisecond or so; the longest such write is reported (target: one action,
which is a no-op here, plus 50 ms).

    make bench BENCHMARKS=benchmarks/actions.py
"""

import os
import statistics
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

import django

django.setup()

from django.core.management import call_command
from django.db import connections, transaction
from django.utils import timezone

from benchmarks import settings
from benchmarks.benchapp.models import Bystander, Reminded
from django_workflow import run_work

DUE = int(os.environ.get("BENCH_DUE", 5_000))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
TABLE = Reminded._meta.db_table
WORK = "timeout:waiting.remind"


def load(alias):
    Reminded.objects.using(alias).all().delete()
    entered = timezone.now() - timedelta(days=2)
    Reminded.objects.using(alias).bulk_create(
        [Reminded(state_entered_at=entered) for _ in range(DUE)], batch_size=1000
    )
    Bystander.objects.using(alias).all().delete()
    Bystander.objects.using(alias).create()


def rearm(alias):
    with connections[alias].cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET waiting_remind_fired_at = NULL")


def ours(alias):
    return run_work(Reminded, WORK)


def hand_written(alias):
    connection = connections[alias]
    lock = " FOR UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    select = (
        f"SELECT id FROM {TABLE} WHERE state = 'waiting' AND state_entered_at <= %s "
        f"AND waiting_remind_fired_at IS NULL ORDER BY state_entered_at LIMIT 1{lock}"
    )
    update = f"UPDATE {TABLE} SET waiting_remind_fired_at = %s WHERE id = %s"
    fired, cutoff = 0, timezone.now() - timedelta(days=1)
    instance = Reminded()
    while True:
        with transaction.atomic(using=alias), connection.cursor() as cursor:
            cursor.execute(select, [cutoff])
            row = cursor.fetchone()
            if row is None:
                return fired
            instance.remind()
            cursor.execute(update, [timezone.now(), row[0]])
        fired += 1


class Bystanding:
    """Another connection writing an unrelated row while the firing runs."""

    def __init__(self, alias):
        self.alias = alias
        self.longest = 0.0
        self.writes = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def _run(self):
        rows = Bystander.objects.using(self.alias)
        try:
            while not self.stop.is_set():
                started = time.perf_counter()
                with transaction.atomic(using=self.alias):
                    rows.update(touched=self.writes)
                self.longest = max(self.longest, time.perf_counter() - started)
                self.writes += 1
                time.sleep(0.001)
        finally:
            connections[self.alias].close()


def measure(alias, side):
    rearm(alias)
    with Bystanding(alias) as bystander:
        started = time.perf_counter()
        fired = side(alias)
        elapsed = time.perf_counter() - started
    assert fired == DUE, f"{side.__name__} fired {fired} of {DUE}"
    return DUE / elapsed, bystander.longest


def describe(values, unit, scale=1.0):
    values = [v * scale for v in values]
    return (
        f"median {statistics.median(values):9,.1f} {unit}  "
        f"(min {min(values):,.1f}, max {max(values):,.1f})"
    )


def run(alias):
    settings.ACTIONS_DATABASE[0] = alias
    load(alias)
    results = {ours: ([], []), hand_written: ([], [])}
    for _ in range(ROUNDS):
        for side in (ours, hand_written):  # alternated, so drift hits both alike
            rate, waited = measure(alias, side)
            results[side][0].append(rate)
            results[side][1].append(waited)
    vendor = connections[alias].vendor
    print(f"{vendor}: {DUE:,} due action timeouts, {ROUNDS} alternated rounds, one process")
    for side, label in ((ours, "django_workflow run_work"), (hand_written, "hand-written")):
        rates, waits = results[side]
        print(f"  {label:26} {describe(rates, 'records/s')}")
        print(f"  {'':26} other writer's longest wait {describe(waits, 'ms', 1000)}")
    ratio = statistics.median(results[ours][0]) / statistics.median(results[hand_written][0])
    print(f"  rate ratio ours / hand-written {ratio:.2f}")
    print(
        f"  targets: >= 1,500 records/s on PostgreSQL; other writer waits <= 50 ms "
        f"(worst seen {max(results[ours][1]) * 1000:.1f} ms)"
    )


def main():
    for alias in ("postgres", "default"):
        call_command("migrate", database=alias, verbosity=0)
        run(alias)


if __name__ == "__main__":
    main()
