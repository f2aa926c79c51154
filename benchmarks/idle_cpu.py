"""Idle CPU of the real worker with 30 workflow models against 1 model.

What it measures: ``manage.py workflow_worker`` started as a subprocess
(settings ``benchmarks/fleet_settings.py``: the documented ``Q_CLUSTER``,
ORM broker polling every 0.05 s, two workers; the worker's default options)
against its own PostgreSQL database, with ``BENCH_FLEET=30`` models declared
and then with ``BENCH_FLEET=1``. Each fleet model (``benchmarks/fleet``) has
an automatic step, a calendar reminder, a business-day reminder and an every
with an until, polled every minute; each table holds ``BENCH_FLEET_ROWS``
rows (default 20,000) settled as in ``benchmarks/deadlines.py`` with "now"
two hours ahead, so nothing falls due during the run.

Per run: start, wait ``BENCH_WARM`` s (default 45: the first look at the
Schedules polls every group at once), then for ``BENCH_CPU_SECONDS`` s
(default 120) sample every second the utime+stime of the worker's process
tree (/proc/<pid>/stat, children reaped meanwhile included) and of the
PostgreSQL client backends connected to the database (pg_stat_activity;
backends born in the window count from birth). Runs go 30, 1, 1, 30.
Target: CPU per minute with 30 models <= 3x with 1 model (worker + backends).

    make bench BENCHMARKS=benchmarks/idle_cpu.py
"""

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.fleet_settings"
os.environ["BENCH_FLEET"] = "30"

from benchmarks import database

DATABASE = database.own("idle_cpu")

import django

django.setup()

from django.core.management import call_command
from django.db import connection, connections
from django.utils import timezone
from django_q.models import OrmQ, Schedule, Task

from benchmarks import common
from benchmarks.fleet.models import FLEET_MODELS
from django_workflow.models import DeadlineDeclaration
from django_workflow.work.due_instants import fingerprint
from django_workflow.worker.schedulers.polling import POLL_TASK

ROWS = int(os.environ.get("BENCH_FLEET_ROWS", 20_000))
WARM = float(os.environ.get("BENCH_WARM", 45))
SECONDS = float(os.environ.get("BENCH_CPU_SECONDS", 120))
TICK = os.sysconf("SC_CLK_TCK")
LOG = Path(tempfile.gettempdir()) / "workflow-bench-idle-cpu.log"  # the worker's output


def prepare():
    call_command("migrate", verbosity=0)
    ahead = timezone.now() + timedelta(hours=2)
    started = time.perf_counter()
    for model in FLEET_MODELS:
        make = common.maker(model, ahead, steps=["s0", "s1", "s2", "s3"])
        common.load(model, "default", ROWS, make, ahead, templates=1000)
        common.verify(model, "default", ROWS, sample=100, now=ahead)
        # What the worker's catch-up writes once it has computed every next_due_at.
        DeadlineDeclaration.objects.update_or_create(
            model=model._meta.label, defaults={"fingerprint": fingerprint(model)}
        )
    print(
        f"{len(FLEET_MODELS)} fleet tables x {ROWS:,} rows ready in "
        f"{time.perf_counter() - started:.0f} s; {common.census(FLEET_MODELS[0], 'default', ROWS)}"
    )


def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def tree(root):
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := stat(entry)) is not None:
            parents[int(entry)] = found[0]
    members, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in members:
                members.add(pid)
                frontier.append(pid)
    return members


def backends(cursor):
    cursor.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    return {row[0] for row in cursor.fetchall()}


class Meter:
    """CPU seconds used by a changing set of processes since the meter started."""

    def __init__(self):
        self.base, self.last = {}, {}

    def sample(self, pids, born_now=False):
        for pid in pids:
            found = stat(pid)
            if found is None:
                continue
            if pid not in self.base:
                self.base[pid] = 0 if born_now else found[1]
            self.last[pid] = found[1]

    def seconds(self):
        return sum(self.last[pid] - self.base[pid] for pid in self.last) / TICK


def one_run(count):
    Schedule.objects.filter(name__startswith="workflow:").delete()
    OrmQ.objects.all().delete()
    Task.objects.all().delete()
    connections.close_all()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCH_FLEET": str(count)}
    with open(LOG, "w") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "django", "workflow_worker"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while "running:" not in LOG.read_text():
            assert worker.poll() is None and time.monotonic() < deadline, LOG.read_text()
            time.sleep(0.2)
        time.sleep(WARM)
        cursor = connection.cursor()
        worker_meter, pg_meter = Meter(), Meter()
        root = stat(worker.pid)
        worker_meter.sample(tree(worker.pid))
        pg_meter.sample(backends(cursor))
        window_start, begun = timezone.now(), time.monotonic()
        while time.monotonic() - begun < SECONDS:
            time.sleep(1)
            worker_meter.sample(tree(worker.pid), born_now=True)
            pg_meter.sample(backends(cursor), born_now=True)
        elapsed = time.monotonic() - begun
        reaped = (stat(worker.pid)[2] - root[2]) / TICK
        polls = Task.objects.filter(func=POLL_TASK, started__gte=window_start).count()
        cursor.close()
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=90)
    minutes = elapsed / 60
    return {
        "worker": (worker_meter.seconds() + reaped) / minutes,
        "postgres": pg_meter.seconds() / minutes,
        "polls": polls / minutes,  # poll tasks (one polls every model of its group)
    }


def main():
    print(f"machine: {common.machine()}")
    prepare()
    runs = {30: [], 1: []}
    for count in (30, 1, 1, 30):
        result = one_run(count)
        runs[count].append(result)
        print(
            f"  {count:>2} model(s): worker {result['worker']:.2f} CPU s/min, PostgreSQL "
            f"backends {result['postgres']:.2f} CPU s/min, {result['polls']:.1f} poll tasks/min "
            f"({common.machine()})"
        )
    print()
    print(
        f"idle CPU per minute, median of {len(runs[1])} runs of {SECONDS:.0f} s each "
        f"(after {WARM:.0f} s warm-up)"
    )
    totals = {}
    for count, results in runs.items():
        worker = statistics.median(r["worker"] for r in results)
        pg = statistics.median(r["postgres"] for r in results)
        polls = statistics.median(r["polls"] for r in results)
        totals[count] = worker + pg
        print(
            f"  {count:>2} model(s): worker {worker:.2f} + PostgreSQL {pg:.2f} = "
            f"{worker + pg:.2f} CPU s/min ({polls:.1f} poll tasks/min)"
        )
    ratio = totals[30] / totals[1]
    print(f"  ratio 30 / 1 {ratio:.2f}   target <= 3.00  {common.verdict(ratio <= 3)}")
    worker_ratio = statistics.median(r["worker"] for r in runs[30]) / statistics.median(
        r["worker"] for r in runs[1]
    )
    print(f"  (worker processes alone: {worker_ratio:.2f})")
    print(f"machine at the end: {common.machine()}")


if __name__ == "__main__":
    main()
