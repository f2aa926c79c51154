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

The peer is a prepared hand-written single-index probe on the same table,
``PREPARE p AS SELECT 1 FROM t WHERE next_due_at <= $1 LIMIT 1`` (SQLite: the
same SELECT, which its statement cache keeps compiled), executed through the
same Django connection. Each round runs ``BENCH_TICKS`` calls of each side,
alternated; the figure is the median round's median call, [min-max] over rounds.

Sizes: PostgreSQL ``BENCH_SIZES`` (default 100,000, 1,000,000, 5,000,000; the
table grows in place between sizes); SQLite the sizes up to 1,000,000.
Targets: idle tick <= 2x the hand probe; tick growth from the smallest to the
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
from django_workflow import probes
from django_workflow.schedulers.polling import poll

TICKS = int(os.environ.get("BENCH_TICKS", 500))
#: Seconds per side and round after which a slow side stops early (after at least 5 calls).
BUDGET = float(os.environ.get("BENCH_BUDGET", 1.0))
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")


def sides(model, alias):
    """The contenders for one table: the real poll(); poll() with the probe ordered by
    next_due_at (a proposed fix, swapped into probes' compiled SQL for its calls only);
    the hand probe as the issue words it; the same ordered by next_due_at."""
    label = model._meta.label
    names = [work.name for work in model.workflow.works]
    table = model._meta.db_table
    connection = connections[alias]
    now = connection.ops.adapt_datetimefield_value(common.NOW)
    probe = f"SELECT 1 FROM {table} WHERE next_due_at <= %s LIMIT 1"
    ordered_probe = probe.replace(" LIMIT", " ORDER BY next_due_at LIMIT")
    key = (model, "any_due", alias)
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

    ours()  # compiles probes' SQL
    shipped = probes._compiled[key]
    fixed = (shipped[0].replace(" LIMIT", f" ORDER BY {_column(connection, table)} ASC LIMIT"), [])

    def with_fix(call):
        def run(*args):
            probes._compiled[key] = fixed
            try:
                return call(*args)
            finally:
                probes._compiled[key] = shipped

        return run

    contenders = {
        "poll()": ours,
        "poll(), ordered probe": with_fix(ours),
        "hand probe": hand("hand"),
        "hand, ordered": hand("ordered"),
    }
    for call in contenders.values():  # compile, prepare (past PostgreSQL's 5 custom plans)
        common.per_call(call, 10)
    return {
        label: (lambda call=call: common.per_call(call, TICKS, BUDGET))
        for label, call in contenders.items()
    }


def _column(connection, table):
    return f"{connection.ops.quote_name(table)}.{connection.ops.quote_name('next_due_at')}"


def explain(model, alias):
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT 1 FROM "
            f"{model._meta.db_table} WHERE next_due_at <= %s LIMIT 1",
            [common.NOW],
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
            plan = explain(model, alias)
            if plan:
                print(f"  probe plan: {plan}")
    return results


def report(vendor, results, wanted):
    print()
    print(
        f"{vendor}: idle tick, µs per call, median [min-max] of {common.ROUNDS} rounds "
        f"(up to {TICKS} calls each)"
    )
    for (kind, size), measured in results.items():
        print(f"  {kind} at {size:,} rows")
        for label, values in measured.items():
            print(f"    {label:<24}{common.spread(values, 1e6):>34}")
        ours = common.med(measured["poll()"])
        for peer in ("hand probe", "hand, ordered"):
            ratio = ours / common.med(measured[peer])
            print(
                f"    poll() / {peer:<14} {ratio:8.2f}   target <= 2.00  "
                f"{common.verdict(ratio <= 2)}"
            )
        ratio = common.med(measured["poll(), ordered probe"]) / common.med(
            measured["hand, ordered"]
        )
        print(f"    (proposed) ordered poll() / hand, ordered {ratio:.2f}")
    print(f"{vendor}: idle tick growth, {wanted[0]:,} -> {wanted[-1]:,} rows (median µs)")
    head = "".join(f"{size:>12,}" for size in wanted)
    print(f"  {'kind':<22}{'contender':<24}{head}  growth  target")
    for kind in KIND_MODELS:
        for label in ("poll()", "poll(), ordered probe", "hand probe", "hand, ordered"):
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
