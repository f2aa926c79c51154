"""32 deadlines on one model against 1: the idle tick and a manual transition.

What it measures, on PostgreSQL, two models of the same shape (steps open and
closed with transitions flip/flop between them, four plain steps p0-p3),
``BENCH_ROWS`` rows each (default 1,000,000), built as in
``benchmarks/deadlines.py``: now is the Tuesday after the holidays, every
deadline due by then already fired, nothing due:

- ``ManyDeadlines``: 32 deadlines, 16 on open and 16 on closed: calendar
  timeouts (1d-5d), business-day timeouts (1bd-5bd), everies with an until,
  and on each step one timeout at a ``calculations`` entry;
- ``OneDeadline``: one calendar timeout on open.

1. idle tick: ``polling.poll(label, all work names, now=NOW)``, nothing due;
   target <= 1.5x the one-deadline model's;
2. manual transition: ``record.transition("flip"/"flop")`` on
   ``BENCH_TRANSITIONS`` records spread over each table, each moved once per
   round (flip from open, flop back the next round; each computes the entered
   step's ``next_due_at``, then the guarded UPDATE and the log row), the two
   models taking turns record by record; a round's figure is its median move;
   target <= 1.2x;
3. the floor the wider row sets: a hand-written ``UPDATE`` of the entry
   instant and ``next_due_at`` on the same kind of spread rows (no target).

Rounds alternate the models (transitions: record by record). ``BENCH_PROFILE=1``
prints a cProfile of the 32-deadline transitions and of the 1-deadline ones.

    make bench BENCHMARKS=benchmarks/many_deadlines.py
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("many_deadlines")

import django

django.setup()

from django.core.management import call_command
from django.db import connections, transaction

from benchmarks import common
from benchmarks.benchapp.models import ManyDeadlines, OneDeadline
from django_workflow.worker.schedulers.polling import poll

ALIAS = "postgres"
TICKS = int(os.environ.get("BENCH_TICKS", 500))
TRANSITIONS = int(os.environ.get("BENCH_TRANSITIONS", 500))
NAMES = ("flip", "flop")


def idle(model):
    label, names = model._meta.label, [work.name for work in model.workflow.works]

    def tick():
        assert not poll(label, names, now=common.NOW)

    common.per_call(tick, 20)
    return lambda: common.per_call(tick, TICKS, 2.0, least=10)


def chosen(model):
    """``TRANSITIONS`` records in ``open`` spread evenly over the table, by key."""
    rows = model.objects.using(ALIAS)
    keys = list(rows.filter(state="open").order_by("pk").values_list("pk", flat=True))
    return keys[:: max(1, len(keys) // TRANSITIONS)][:TRANSITIONS]


def transitions(models):
    """One round: the chosen records of every model, loaded beforehand, each moved once
    (``flip`` from open, or ``flop`` back the next round), the models taking turns
    record by record, so a burst of noise hits them alike. Each model's figure is
    its median move of the round."""
    keys = {label: chosen(model) for label, model in models.items()}
    labels, calls = list(models), iter(range(1_000_000))

    def run():
        name = NAMES[next(calls) % 2]
        loaded = {
            label: list(model.objects.using(ALIAS).filter(pk__in=keys[label]).order_by("pk"))
            for label, model in models.items()
        }
        samples = {label: [] for label in labels}
        for index in range(min(map(len, loaded.values()))):
            for label in labels if index % 2 == 0 else labels[::-1]:
                started = common.time.perf_counter()
                loaded[label][index].transition(name, actor="bench")
                samples[label].append(common.time.perf_counter() - started)
        return {label: common.med(values) for label, values in samples.items()}

    run()
    run()  # back to open
    return run


def paired_rounds(run, rounds=common.ROUNDS):
    """Each side's figure of every round of ``run``."""
    results = {}
    for _ in range(rounds):
        for label, value in run().items():
            results.setdefault(label, []).append(value)
    return results


def plain_updates(model):
    """The floor a table's width sets: a hand-written ``UPDATE`` of the entry instant and
    ``next_due_at`` on the same kind of spread rows, one transaction each."""
    connection = connections[ALIAS]
    table, keys = model._meta.db_table, chosen(model)
    sql = (
        f"UPDATE {table} SET state_entered_at = now(), "
        "next_due_at = now() + interval '1 day' WHERE id = %s"
    )

    def run():
        total = 0.0
        for key in keys:
            started = common.time.perf_counter()
            with transaction.atomic(using=ALIAS), connection.cursor() as cursor:
                cursor.execute(sql, [key])
            total += common.time.perf_counter() - started
        return total / len(keys)

    return run


def main():
    print(f"machine: {common.machine()}")
    common.use(ALIAS)
    call_command("migrate", database=ALIAS, verbosity=0)
    for model in (ManyDeadlines, OneDeadline):
        seconds = common.load(model, ALIAS, common.ROWS)
        checked = common.verify(model, ALIAS, common.ROWS)
        print(f"{model.__name__}: {common.ROWS:,} rows ready in {seconds:.0f} s, {checked} checked")
        print(f"  rows: {common.census(model, ALIAS, common.ROWS)}")
        print(f"  deadlines: {sum(map(len, model.workflow.deadline_works.values()))}")
    ticks = common.alternate({"32 deadlines": idle(ManyDeadlines), "1 deadline": idle(OneDeadline)})
    moves = paired_rounds(transitions({"32 deadlines": ManyDeadlines, "1 deadline": OneDeadline}))
    floors = common.alternate(
        {"32 deadlines": plain_updates(ManyDeadlines), "1 deadline": plain_updates(OneDeadline)}
    )
    print()
    print(f"PostgreSQL, {common.ROWS:,} rows each, median [min-max] of {common.ROUNDS} rounds")
    for title, results, unit, target in (
        ("idle tick (poll, nothing due)", ticks, "µs", 1.5),
        ("manual transition", moves, "µs", 1.2),
        ("plain UPDATE of the same rows (the width's floor)", floors, "µs", None),
    ):
        print(f"  {title}")
        for label, values in results.items():
            print(f"    {label:<14}{common.spread(values, 1e6):>32} {unit}")
        ratio = common.med(results["32 deadlines"]) / common.med(results["1 deadline"])
        pairs = zip(results["32 deadlines"], results["1 deadline"], strict=True)
        rounds = [a / b for a, b in pairs]
        print(f"    ratio per round {common.spread(rounds, digits=2):>26}")
        if target is None:
            print(f"    ratio 32 / 1 {ratio:6.2f}")
            continue
        mark = common.verdict(ratio <= target)
        print(f"    ratio 32 / 1 {ratio:6.2f}   target <= {target:.2f}  {mark}")
    if common.profiling():  # both, so the difference can be read off
        for model in (ManyDeadlines, OneDeadline):
            print(f"cProfile, {model.__name__} transitions:")
            run = transitions({model.__name__: model})
            common.profile(run, top=30)
    connections.close_all()


if __name__ == "__main__":
    main()
    print(f"machine at the end: {common.machine()}")
