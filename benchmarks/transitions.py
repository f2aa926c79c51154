"""Manual transitions per second: django_workflow against django-fsm-2, same run,
with Django's save signals on and off.

Each transition is guarded against a concurrent change, saved and logged in
one transaction. The peer is django-fsm-2 with ConcurrentTransitionMixin and
a log row of the same shape; its transitions are written by ``save()``, so
they send ``pre_save``/``post_save`` like any save. django_workflow writes a
step change with a conditional UPDATE and sends both signals itself when a
receiver listens for the model (``Workflow.save_signals``, default True).

Contenders, each round running ``BENCH_TRANSITIONS`` transitions on a fresh
record of each, the order reversed every other round:

- signals on: a no-op receiver (it counts its calls, checked after each
  round) connected to ``pre_save`` and ``post_save`` for the model, as a
  save-based app (django-simple-history, django-auditlog, a cache) has;
- signals off: no receiver for the model;
- django_workflow only, ``save_signals=False``: the receiver connected, the
  model's ``Workflow.save_signals`` set to False for the round (the compiled
  option the engine reads on every step change), so the receiver is not called;
- a row-lock guard (lock the row, compare, update; no receiver): the
  alternative to the engine's conditional UPDATE, the measurement behind that
  choice.

SQLite runs with ``PRAGMA synchronous = OFF``, as the PostgreSQL the benchmarks
start runs with ``fsync=off``: with a disk flush per commit (some 15 ms on an
ordinary disk) every contender measures the disk, and the ratios say nothing.

The figure is each contender's median round, [min-max] over rounds. Target:
django_workflow / django-fsm-2 <= 1.30 with the signals on (also shown off).
``BENCH_PROFILE=1`` prints a cProfile of one signals-on round of each.
The machine may be shared: compare ratios of the same run, not absolute times.

    make bench BENCHMARKS=benchmarks/transitions.py    (starts PostgreSQL)
    BENCH_DATABASES=default .venv/bin/python benchmarks/transitions.py   (SQLite only)
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
from django.db.backends.signals import connection_created
from django.db.models.signals import post_save, pre_save
from django.utils import timezone

from benchmarks import common
from benchmarks.benchapp.models import Ours, Peer
from django_workflow.models import TransitionLog

ROUNDS = int(os.environ.get("BENCH_ROUNDS", 7))
PER_ROUND = int(os.environ.get("BENCH_TRANSITIONS", 1000))
NAMES = ("flip", "flop")
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")


connection_created.connect(common.no_flush)
#: Calls of the no-op receiver, per model, in the current round.
heard = {}


def receiver(sender, **kwargs):
    """What a save-based app connects, doing nothing: only the cost of being called."""
    heard[sender] = heard.get(sender, 0) + 1


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


def one_round(model, step, alias, count=PER_ROUND):
    record = model.objects.using(alias).create()
    record = model.objects.using(alias).get(pk=record.pk)
    started = time.perf_counter()
    for index in range(count):
        step(record, index)
    return (time.perf_counter() - started) / count


#: label: (model, step, receiver connected, model's save_signals, receiver calls per transition)
CONTENDERS = {
    "django_workflow, signals on": (Ours, ours, True, True, 2),
    "django_workflow, no receiver": (Ours, ours, False, True, 0),
    "django_workflow, save_signals=False": (Ours, ours, True, False, 0),
    "django-fsm-2, signals on": (Peer, peer, True, True, 2),
    "django-fsm-2, no receiver": (Peer, peer, False, True, 0),
    "row-lock guard, no receiver": (Ours, row_lock, False, True, 0),
}


def configured(label, alias, count=PER_ROUND):
    """One round of ``label``: its receivers and option set before, undone after, and
    the receiver's calls checked (two per transition with the signals on, else none)."""
    model, step, connected, save_signals, calls = CONTENDERS[label]
    if connected:
        pre_save.connect(receiver, sender=model)
        post_save.connect(receiver, sender=model)
    if model is Ours:
        Ours.workflow.save_signals = save_signals
    heard.clear()
    try:
        seconds = one_round(model, step, alias, count)
    finally:
        pre_save.disconnect(receiver, sender=model)
        post_save.disconnect(receiver, sender=model)
        Ours.workflow.save_signals = True
    # the round's fresh record is made by create(): its save() sends both signals too
    expected = calls * count + (2 if connected else 0)
    got = heard.get(model, 0)
    assert got == expected, f"{label}: receiver called {got} times, expected {expected}"
    return seconds


def measure(alias):
    call_command("migrate", database=alias, run_syncdb=True, verbosity=0)
    for label in CONTENDERS:  # warm caches and connections
        configured(label, alias, 100)
    sides = {label: (lambda label=label: configured(label, alias)) for label in CONTENDERS}
    timings = common.alternate(sides, rounds=ROUNDS)
    if common.profiling():
        for label in ("django_workflow, signals on", "django-fsm-2, signals on"):
            print(f"cProfile, {alias}, {label}, {PER_ROUND} transitions:")
            common.profile(lambda label=label: configured(label, alias), top=25)
    return timings


def report(alias, timings):
    label = "postgresql" if alias == "postgres" else "sqlite"
    print()
    print(
        f"{label}: {ROUNDS} rounds x {PER_ROUND} transitions, alternated; "
        "median round [min-max], µs per transition"
    )
    for name, values in timings.items():
        rate = 1 / statistics.median(values)
        print(f"  {name:<38}{common.spread(values, 1e6):>26}  {rate:>8,.0f}/s")
    med = {name: statistics.median(values) for name, values in timings.items()}
    fsm_on, fsm_off = med["django-fsm-2, signals on"], med["django-fsm-2, no receiver"]
    rows = (
        ("signals on", med["django_workflow, signals on"], fsm_on, True),
        ("no receiver", med["django_workflow, no receiver"], fsm_off, False),
        (
            "save_signals=False vs fsm no receiver",
            med["django_workflow, save_signals=False"],
            fsm_off,
            False,
        ),
    )
    for title, ours_, peer_, target in rows:
        ratio = ours_ / peer_
        mark = f"target <= 1.30  {common.verdict(ratio <= 1.3)}" if target else "(shown)"
        print(f"  django_workflow / django-fsm-2, {title:<38} {ratio:5.2f}  {mark}")
    print(
        f"  what the receiver adds: django_workflow "
        f"{med['django_workflow, signals on'] / med['django_workflow, no receiver']:.2f}x, "
        f"django-fsm-2 {fsm_on / fsm_off:.2f}x"
    )
    lock = med["row-lock guard, no receiver"] / med["django_workflow, no receiver"]
    print(f"  row-lock guard / conditional update (the engine's), no receiver: {lock:.2f}")


def main():
    print(f"machine: {common.machine()}")
    results = {alias: measure(alias) for alias in DATABASES}
    for alias, timings in results.items():
        report(alias, timings)
    print(f"machine at the end: {common.machine()}")


if __name__ == "__main__":
    main()
