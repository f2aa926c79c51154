"""Manual transitions per second: django_workflow against django-fsm-2, same run.

Each transition is guarded against a concurrent change, saved and logged in
one transaction. The peer is django-fsm-2 with ConcurrentTransitionMixin and
a log row of the same shape. A third contender guards with a row lock and a
comparison instead of the engine's conditional UPDATE, the measurement behind
that choice. Rounds alternate between contenders; the figure is the median
round.

    make bench            (starts PostgreSQL, installs django-fsm-2)
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("transitions")

import django

django.setup()

from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from benchmarks.benchapp.models import Ours, Peer
from django_workflow.models import TransitionLog

ROUNDS = int(os.environ.get("BENCH_ROUNDS", 7))
PER_ROUND = int(os.environ.get("BENCH_TRANSITIONS", 1000))
NAMES = ("flip", "flop")


def ours(record, index):
    record.transition(NAMES[index % 2], actor="bench")


def peer(record, index):
    record.run(NAMES[index % 2], actor="bench")


def row_lock(record, index):
    """The alternative guard: lock the row, compare, update (what the engine does not do)."""
    db = record._state.db
    target = "closed" if record.state == "open" else "open"
    with transaction.atomic(using=db):
        current = Ours.objects.using(db).select_for_update().only("state").get(pk=record.pk)
        if current.state != record.state:
            raise RuntimeError("stale")
        now = timezone.now()
        Ours.objects.using(db).filter(pk=record.pk).update(state=target, state_entered_at=now)
        TransitionLog.objects.using(db).create(
            content_type=ContentType.objects.db_manager(db).get_for_model(Ours),
            object_id=str(record.pk),
            from_state=record.state,
            to_state=target,
            transition_name=NAMES[index % 2],
            triggered_by="manual",
            actor_repr="bench",
        )
    record.state, record.state_entered_at = target, now


def one_round(model, step, alias):
    record = model.objects.using(alias).create()
    record = model.objects.using(alias).get(pk=record.pk)
    started = time.perf_counter()
    for index in range(PER_ROUND):
        step(record, index)
    return (time.perf_counter() - started) / PER_ROUND


def measure(alias):
    call_command("migrate", database=alias, run_syncdb=True, verbosity=0)
    contenders = {
        "django_workflow": (Ours, ours),
        "django-fsm-2": (Peer, peer),
        "row-lock guard": (Ours, row_lock),
    }
    timings = {name: [] for name in contenders}
    for model, step in contenders.values():  # warm caches and connections
        one_round(model, step, alias)
    for _ in range(ROUNDS):
        for name, (model, step) in contenders.items():
            timings[name].append(one_round(model, step, alias))
    return {name: statistics.median(values) for name, values in timings.items()}


def main():
    print(f"{ROUNDS} rounds x {PER_ROUND} transitions, median round")
    print(f"{'database':<10} {'implementation':<16} {'per second':>11} {'ms each':>9}")
    for alias in ("postgres", "default"):
        result = measure(alias)
        label = "postgresql" if alias == "postgres" else "sqlite"
        for name, seconds in result.items():
            print(f"{label:<10} {name:<16} {1 / seconds:>11,.0f} {seconds * 1000:>9.3f}")
        ratio = result["django_workflow"] / result["django-fsm-2"]
        print(
            f"{label:<10} time ratio django_workflow / django-fsm-2: {ratio:.2f} (target <= 1.30)"
        )
        lock = result["row-lock guard"] / result["django_workflow"]
        print(f"{label:<10} row-lock guard / conditional update (the engine's): {lock:.2f}")


if __name__ == "__main__":
    main()
