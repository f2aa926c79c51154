"""Where the time of one firing goes: cProfile of ``polling.poll`` firing due action
timeouts, and of manual transitions (``flip``/``flop``), per record, on PostgreSQL and
on SQLite (``BENCH_DATABASES`` as in ``benchmarks/throughput.py``).

Prints the unprofiled rate first (median of 3), then the profiled time per record
grouped by where it is spent (the database driver, the engine, Django, builtins,
the meters), then the engine's functions by their own time. cProfile adds to every
call, so the profiled total is above the unprofiled; compare shares, not sums.

    make bench BENCHMARKS=benchmarks/profile_firing.py     (with the spinners, a minute)
    BENCH_PROFILED=2000 sets how many records each side profiles.
"""

import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.databases import set_up

set_up(__file__, "profile")

from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from benchmarks import common
from benchmarks import throughput_sides as sides
from benchmarks.benchapp.models import Nudge
from django_workflow.worker.schedulers.polling import poll

COUNT = int(os.environ.get("BENCH_PROFILED", "2000"))


def firing(profile=None):
    """Fire ``COUNT`` due action timeouts with one poll; records per second."""
    Nudge._base_manager.all().delete()
    sides.due_nudges(COUNT)
    names = [work.name for work in Nudge.workflow.works]
    if profile:
        profile.enable()
    started = time.perf_counter()
    fired = sum(poll(Nudge._meta.label, names, now=timezone.now()).values())
    elapsed = time.perf_counter() - started
    if profile:
        profile.disable()
    assert fired == COUNT, f"poll fired {fired} of {COUNT}"
    return COUNT / elapsed


def transitions(profile=None):
    run = sides.manual_engine(COUNT)
    if profile:
        profile.enable()
    rate = run()
    if profile:
        profile.disable()
    return rate


def where(path):
    if "/django_workflow/" in path:
        return "the engine (django_workflow)"
    for name in ("psycopg", "django", "prometheus_client", "asgiref"):
        if f"/{name}/" in path:
            return name
    return "builtins" if path == "~" else "the standard library"


def report(title, side):
    side()  # warm the caches
    rate = statistics.median(side() for _ in range(3))
    profile = cProfile.Profile()
    side(profile)
    stats = pstats.Stats(profile).stats
    print(f"{title}: {rate:,.0f}/s unprofiled ({1e6 / rate:,.0f} us per record)")
    groups = {}
    for (path, _, _), (_, _, own, _, _) in stats.items():
        groups[where(path)] = groups.get(where(path), 0) + own
    total = sum(groups.values())
    for name, own in sorted(groups.items(), key=lambda item: -item[1]):
        print(f"  {name:32s} {own * 1e6 / COUNT:7.1f} us  {own / total:5.1%}")
    waited = sum(own for (path, _, name), (_, _, own, _, _) in stats.items() if name == "wait")
    if waited:
        print(f"  of which psycopg waits on the server {waited * 1e6 / COUNT:7.1f} us")
    for title, group in (("the engine's", "the engine (django_workflow)"), ("builtin", "builtins")):
        print(f"  {title} functions by their own time, per record:")
        rows = [
            (own, calls, f"{path.split('django_workflow/')[-1]}:{name}")
            for (path, _, name), (_, calls, own, _, _) in stats.items()
            if where(path) == group
        ]
        for own, calls, name in sorted(rows, reverse=True)[:8]:
            print(f"    {own * 1e6 / COUNT:6.1f} us  {calls / COUNT:4.1f} calls  {name}")


if __name__ == "__main__":
    call_command("migrate", verbosity=0)
    print(f"{connection.vendor}; machine: {common.machine()}")
    report("action timeouts fired by one poll", firing)
    report("manual transitions (flip/flop)", transitions)
