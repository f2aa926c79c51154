"""The idle tick per kind of deadline and table size, against a hand-written probe.

What it measures: the cost of one idle poll — ``polling.poll(model_label,
work_names, now=NOW)``, the django-q2 task a Schedule runs, called in-process
with nothing due — for four models, one per kind of deadline:

- ``calendar 2d``: ``Timeout(fire_after="2d", action=…)``;
- ``business 2bd``: ``Timeout(fire_after="2bd", action=…)``, Zagreb time, holidays;
- ``every 1d until 7d``: ``Every(interval="1d", until="7d", action=…)``;
- ``calculation fire_at``: ``Timeout(fire_at=<calculations entry>, action=…)``.

Each model has eight steps, the deadline on four of them. "Now" is Tuesday
29 December 2026 10:00 in Zagreb, after a holiday Monday, a weekend and a
holiday Thursday and Friday. The rows (see ``benchmarks/common.py``) are
spread over the eight steps and were entered up to 60 days before now,
settled as a worker would have left them: every deadline due by now already
fired (fired columns set, rows still in the step — well over 50,000 per
million), everies past their ``until``, business-day deadlines pushed past
the holidays; so nothing is due. ``next_due_at`` is the engine's own
``deadlines.next_due``, checked on a sample read back through the ORM.

The baseline is a prepared hand-written single-index probe on the same table,
``PREPARE p AS SELECT 1 FROM t WHERE next_due_at <= $1 ORDER BY next_due_at
LIMIT 1`` (SQLite: the same SELECT, which its statement cache keeps compiled),
executed through the same Django connection. The issue's wording of it, without
``ORDER BY``, is measured too and reported as a footnote only: once PostgreSQL
plans it generically (from the sixth EXECUTE on a connection) it reads the whole
table when nothing is due, so it is no fair baseline. Each side gets ``WARMUP``
untimed calls, then each round runs ``BENCH_TICKS`` calls of each side (at least
``MIN_TICKS`` even past the ``BENCH_BUDGET`` seconds), alternated; the figure is
the median round's median call, [min-max] over rounds. After the rounds the
generic/custom plan counts of every prepared statement (``pg_prepared_statements``)
and the plan poll()'s statement runs with are printed.

Sizes: PostgreSQL ``BENCH_SIZES`` (default 100,000, 1,000,000, 5,000,000; the
table grows in place between sizes); SQLite the sizes up to 1,000,000.
Targets: idle tick <= 2x the ordered hand probe; tick growth from the smallest to the
largest size <= 1.5x.

    make bench BENCHMARKS=benchmarks/deadlines.py
    BENCH_SIZES=100000,1000000 make bench BENCHMARKS=benchmarks/deadlines.py
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("deadlines")

import django

django.setup()

from django.core.management import call_command
from django.db import connections

from benchmarks import common
from benchmarks.benchapp.models import KIND_MODELS
from django_workflow.engine.sql import probes
from django_workflow.worker.schedulers.polling import poll

TICKS = int(os.environ.get("BENCH_TICKS", 500))
#: Calls per side and round however slow (a generic plan needs more than five on a connection).
MIN_TICKS = 10
#: Untimed calls of each side before the rounds.
WARMUP = 10
#: Seconds per side and round after which a slow side stops early (after at least 5 calls).
BUDGET = float(os.environ.get("BENCH_BUDGET", 1.0))
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")
BASELINE = "hand probe, ordered"
UNORDERED = "hand probe, unordered"


def sides(model, alias):
    """The contenders for one table: the real poll(); the hand probe ordered by
    next_due_at (the baseline); the hand probe as the issue words it, unordered."""
    label = model._meta.label
    names = [work.name for work in model.workflow.works]
    table = model._meta.db_table
    connection = connections[alias]
    now = connection.ops.adapt_datetimefield_value(common.NOW)
    probe = f"SELECT 1 FROM {table} WHERE next_due_at <= %s LIMIT 1"
    ordered_probe = probe.replace(" LIMIT", " ORDER BY next_due_at LIMIT")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("DEALLOCATE ALL")
            probes._prepared_by_session.pop(connection.connection, None)
            cursor.execute(f"PREPARE hand_probe AS {probe.replace('%s', '$1')}")
            cursor.execute(f"PREPARE hand_ordered AS {ordered_probe.replace('%s', '$1')}")
        statements = {"hand": "EXECUTE hand_probe(%s)", "ordered": "EXECUTE hand_ordered(%s)"}
    else:
        statements = {"hand": probe, "ordered": ordered_probe}

    def ours():
        assert not poll(label, names, now=common.NOW)

    def hand(which):
        def call():
            with connection.cursor() as cursor:
                cursor.execute(statements[which], [now])
                assert cursor.fetchone() is None

        return call

    contenders = {
        "poll()": ours,
        BASELINE: hand("ordered"),
        UNORDERED: hand("hand"),
    }
    # Past PostgreSQL's five custom plans, on this connection, before anything is timed:
    # from the sixth EXECUTE on, the server may plan each statement generically.
    for call in contenders.values():
        common.per_call(call, WARMUP)
    return {
        label: (lambda call=call: common.per_call(call, TICKS, BUDGET, least=MIN_TICKS))
        for label, call in contenders.items()
    }


def plans(alias):
    """How PostgreSQL planned each prepared statement on this connection: generic and
    custom plan counts (pg_prepared_statements), so a generic plan is seen to be in use."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return ""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements ORDER BY name"
        )
        rows = cursor.fetchall()
    named = {"hand_ordered": "hand ordered", "hand_probe": "hand unordered"}
    return ", ".join(
        f"{named.get(name, 'poll()')} {generic} generic/{custom} custom"
        for name, generic, custom in rows
    )


def explain(model, alias):
    """The plan of poll()'s own prepared statement as this connection runs it now."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return ""
    statements = probes._prepared_by_session.get(connection.connection, ())
    if len(statements) != 1:
        return ""
    name = next(iter(statements))
    with connection.cursor() as cursor:
        cursor.execute(
            f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE {name}(%s)", [common.NOW]
        )
        lines = [row[0].strip() for row in cursor.fetchall()]
    scan = next((line for line in lines if "Scan" in line), "")
    buffers = next((line for line in lines if line.startswith("Buffers")), "")
    return f"{scan.split(' on ')[0].lstrip('-> ')}, {buffers}"


def run(alias, wanted):
    common.use(alias)
    call_command("migrate", database=alias, verbosity=0)
    vendor = connections[alias].vendor
    results = {}
    for kind, model in KIND_MODELS.items():
        for size in wanted:
            seconds = common.load(model, alias, size)
            checked = common.verify(model, alias, size)
            print(f"{vendor} {kind}: {size:,} rows ready in {seconds:.0f} s, {checked} checked")
            if size == wanted[-1]:
                print(f"  rows: {common.census(model, alias, size)}")
            measured = common.alternate(sides(model, alias))
            results[(kind, size)] = measured
            counts = plans(alias)
            if counts:
                print(f"  plans after the rounds: {counts}")
                print(f"  poll()'s probe now runs: {explain(model, alias)}")
    return results


def report(vendor, results, wanted):
    print()
    print(
        f"{vendor}: idle tick, µs per call, median [min-max] of {common.ROUNDS} rounds "
        f"({MIN_TICKS} to {TICKS} calls each, after {WARMUP} untimed)"
    )
    for (kind, size), measured in results.items():
        print(f"  {kind} at {size:,} rows")
        for label, values in measured.items():
            print(f"    {label:<24}{common.spread(values, 1e6):>34}")
        ratio = common.med(measured["poll()"]) / common.med(measured[BASELINE])
        print(
            f"    poll() / {BASELINE:<22} {ratio:8.2f}   target <= 2.00  "
            f"{common.verdict(ratio <= 2)}"
        )
        ratio = common.med(measured["poll()"]) / common.med(measured[UNORDERED])
        print(f"    (footnote) poll() / {UNORDERED} {ratio:.2f}")
    print(f"{vendor}: idle tick growth, {wanted[0]:,} -> {wanted[-1]:,} rows (median µs)")
    head = "".join(f"{size:>12,}" for size in wanted)
    print(f"  {'kind':<22}{'contender':<24}{head}  growth  target")
    for kind in KIND_MODELS:
        for label in ("poll()", BASELINE, UNORDERED):
            ticks = [common.med(results[(kind, size)][label]) for size in wanted]
            growth = ticks[-1] / ticks[0]
            cells = "".join(f"{tick * 1e6:>12.1f}" for tick in ticks)
            mark = f"<= 1.50 {common.verdict(growth <= 1.5)}" if label == "poll()" else ""
            print(f"  {kind:<22}{label:<24}{cells}  {growth:6.2f}  {mark}")


def main():
    print(f"machine: {common.machine()}")
    everything = {}
    for alias in DATABASES:
        wanted = common.sizes()
        if connections[alias].vendor == "sqlite":
            wanted = [size for size in wanted if size <= 1_000_000]
        everything[alias] = (run(alias, wanted), wanted)
    for alias, (results, wanted) in everything.items():
        report(connections[alias].vendor, results, wanted)


if __name__ == "__main__":
    main()
    print(f"machine at the end: {common.machine()}")
