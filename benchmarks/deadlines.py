"""Polling and firing deadlines on 1,000,000 rows, against hand-written SQL in the same run.

The table: 20 steps x 50,000 rows, entry times over 60 days. All 50,000 rows
of s00 sit past a reminder that already fired this round (the realistic
case: most records linger past their reminder). s01 and s03 each hold
10,000 rows past a 7-day transition timeout.

- idle poll: run_work for the reminder, which finds nothing, against the
  hand-written claim query for the same condition;
- firing: run_work moves s01's 10,000 due rows; hand-written
  UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 500)
  RETURNING id moves s03's; the rows are put back after each side, and the
  sides alternate over BENCH_ROUNDS rounds.

    make bench BENCHMARKS=benchmarks/deadlines.py
"""

import os
import statistics
import sys
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

from benchmarks.benchapp.models import Deadlined
from django_workflow import run_work

ALIAS = "postgres"
ROWS = int(os.environ.get("BENCH_ROWS", 1_000_000))
PER_STEP = ROWS // 20
DUE = int(os.environ.get("BENCH_DUE", 10_000))
POLLS = 300
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
BATCH = 500
TABLE = Deadlined._meta.db_table

HAND_WRITTEN_POLL = f"""
    SELECT id FROM {TABLE}
    WHERE state = 's00' AND state_entered_at <= %s AND s00_reminder_fired_at IS NULL
    ORDER BY state_entered_at LIMIT {BATCH} FOR UPDATE SKIP LOCKED
"""
HAND_WRITTEN_CLAIM = f"""
    UPDATE {TABLE} SET state = 's04', state_entered_at = %s
    WHERE id IN (
        SELECT id FROM {TABLE} WHERE state = 's03' AND state_entered_at <= %s
        ORDER BY state_entered_at LIMIT {BATCH} FOR UPDATE SKIP LOCKED
    ) RETURNING id
"""


def load(cursor):
    cursor.execute(f"TRUNCATE {TABLE}")
    cursor.execute(
        f"""
        INSERT INTO {TABLE} (state, state_entered_at)
        SELECT 's' || lpad((g %% 20)::text, 2, '0'), now() - random() * interval '60 days'
        FROM generate_series(1, %s) g
        """,
        [PER_STEP * 20],
    )
    cursor.execute(
        f"""
        UPDATE {TABLE} SET state_entered_at = now() - interval '2 days'
                                             - random() * interval '58 days',
                           s00_reminder_fired_at = now() - random() * interval '1 day'
        WHERE state = 's00'
        """
    )
    cursor.execute(
        f"""
        UPDATE {TABLE} t SET state_entered_at = CASE
            WHEN ranked.n <= %s THEN now() - interval '7 days' - random() * interval '53 days'
            ELSE now() - random() * interval '6 days' END
        FROM (SELECT id, row_number() OVER (PARTITION BY state ORDER BY id) AS n
              FROM {TABLE} WHERE state IN ('s01', 's03')) ranked
        WHERE t.id = ranked.id
        """,
        [DUE],
    )
    cursor.execute(f"VACUUM ANALYZE {TABLE}")


def timed(function, repeat):
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def idle_polls(cursor):
    now = timezone.now()
    ours = timed(lambda: run_work(Deadlined, "timeout:s00.reminder", now=now), POLLS)

    def hand_written():
        with transaction.atomic(using=ALIAS):
            cursor.execute(HAND_WRITTEN_POLL, [now - timedelta(days=2)])
            cursor.fetchall()

    def hand_written_autocommit():
        cursor.execute(HAND_WRITTEN_POLL, [now - timedelta(days=2)])
        cursor.fetchall()

    return ours, timed(hand_written, POLLS), timed(hand_written_autocommit, POLLS)


def fire_ours(cursor, now):
    return run_work(Deadlined, "timeout:s01.expire", now=now)


def fire_hand_written(cursor, now):
    moved = 0
    while True:
        cursor.execute(HAND_WRITTEN_CLAIM, [now, now - timedelta(days=7)])
        claimed = len(cursor.fetchall())
        moved += claimed
        if claimed < BATCH:
            return moved


def put_back(cursor, now):
    """Return the rows a round moved, so every round fires the same DUE rows."""
    for moved_to, came_from in (("s02", "s01"), ("s04", "s03")):
        cursor.execute(
            f"UPDATE {TABLE} SET state = %s, state_entered_at = %s - interval '8 days' "
            f"WHERE state = %s AND state_entered_at = %s",
            [came_from, now, moved_to, now],
        )


def firing(cursor):
    """Alternated rounds: each side fires its DUE rows, which are then put back."""
    rates = {fire_ours: [], fire_hand_written: []}
    for round_number in range(ROUNDS):
        sides = (fire_ours, fire_hand_written)
        for side in sides if round_number % 2 == 0 else reversed(sides):
            now = timezone.now()
            started = time.perf_counter()
            fired = side(cursor, now)
            rates[side].append(fired / (time.perf_counter() - started))
            assert fired == DUE, f"{side.__name__} fired {fired} of {DUE}"
            put_back(cursor, now)
    return rates[fire_ours], rates[fire_hand_written]


def spread(rates):
    return (
        f"median {statistics.median(rates):9,.0f} rows/s "
        f"(min {min(rates):,.0f}, max {max(rates):,.0f})"
    )


def main():
    call_command("migrate", database=ALIAS, verbosity=0)
    cursor = connections[ALIAS].cursor()
    started = time.perf_counter()
    load(cursor)
    print(f"loaded {PER_STEP * 20:,} rows in {time.perf_counter() - started:.0f} s")
    ours, hand, hand_autocommit = idle_polls(cursor)
    print("idle poll (nothing due; 50,000 rows past a reminder that already fired)")
    print(f"  django_workflow run_work          {ours * 1000:7.3f} ms  (target < 2 ms)")
    print(f"  hand-written claim, transaction   {hand * 1000:7.3f} ms")
    print(f"  hand-written claim, autocommit    {hand_autocommit * 1000:7.3f} ms")
    print(f"  ratio, hand-written in a transaction  {ours / hand:5.2f}  (target <= 2)")
    print(f"  ratio, hand-written in autocommit     {ours / hand_autocommit:5.2f}  (target <= 2)")
    ours, hand = firing(cursor)
    print(f"claim and fire {DUE:,} due transition timeouts (batches of {BATCH}), {ROUNDS} rounds")
    print(f"  django_workflow run_work   {spread(ours)}")
    print(f"  hand-written UPDATE        {spread(hand)}")
    ratio = statistics.median(ours) / statistics.median(hand)
    print(f"  rate ratio ours / hand-written {ratio:.2f} (target >= 0.5)")


if __name__ == "__main__":
    main()
