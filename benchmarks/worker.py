"""The worker on PostgreSQL: chain latency and precise lateness, through a real cluster.

- latency from a record entering a five-step automatic chain to reaching
  its end, with ``workflow_worker`` running (target under 1 s);
- the precise timeline's lateness over 1,000 deadlines, median and 99th
  percentile (target p99 under 100 ms).

Its own database (``bench_worker``), so the worker's start-up catch-up never
meets the other benchmarks' million-row tables. The idle cost of polling is
measured by ``benchmarks/deadlines.py``, ``many_deadlines.py`` and ``idle_cpu.py``.

    make bench BENCHMARKS=benchmarks/worker.py
"""

import os
import signal
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.worker_settings")

from benchmarks import database

database.own("worker")

import django

django.setup()

from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from benchmarks.benchapp.models import BenchAlarm, Chain

CHAINS = 20
ALARMS = int(os.environ.get("BENCH_ALARMS", 1000))


def start_worker():
    connections.close_all()
    log = open(ROOT / "benchmarks" / ".worker.log", "w")  # noqa: SIM115 - lives with the process
    process = subprocess.Popen(
        [sys.executable, "-m", "django", "workflow_worker"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_for(lambda: "running:" in (ROOT / "benchmarks" / ".worker.log").read_text(), 60)
    time.sleep(2)  # the timeline takes its lease at its first sweep
    return process


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.002)
    raise TimeoutError("the worker did not get there in time")


def chain_latency():
    samples = []
    for _ in range(CHAINS):
        started = time.perf_counter()
        record = Chain.objects.create()
        wait_for(lambda pk=record.pk: Chain.objects.filter(pk=pk, state="done").exists(), 30)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), max(samples)


def precise_lateness():
    start = timezone.now() + timedelta(seconds=8)
    spread = timedelta(seconds=20) / ALARMS
    BenchAlarm.objects.bulk_create(
        [BenchAlarm(ring_at=start + spread * index) for index in range(ALARMS)], batch_size=1000
    )
    wait_for(lambda: not BenchAlarm.objects.filter(rang_at__isnull=True).exists(), 120)
    lateness = sorted(
        (alarm.rang_at - alarm.ring_at).total_seconds()
        for alarm in BenchAlarm.objects.only("ring_at", "rang_at")
    )
    p99 = lateness[int(len(lateness) * 0.99) - 1]
    return statistics.median(lateness), p99, lateness[0]


def main():
    call_command("migrate", verbosity=0)
    Chain.objects.all().delete()
    BenchAlarm.objects.all().delete()
    worker = start_worker()
    try:
        median, worst = chain_latency()
        print(f"five-step automatic chain, {CHAINS} records")
        print(f"  entry to end: median {median * 1000:.0f} ms, max {worst * 1000:.0f} ms")
        print("  (target under 1 s)")
        median, p99, earliest = precise_lateness()
        print(f"precise timeline, {ALARMS:,} deadlines over 20 s")
        print(f"  lateness: median {median * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
        print(f"  earliest {earliest * 1000:.1f} ms (never negative); target p99 under 100 ms")
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)


if __name__ == "__main__":
    main()
