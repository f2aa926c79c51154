"""Events from outside delivered per second, one process, on PostgreSQL: ``deliver()``
against a hand-written loop doing the same work, alternated in rounds.

Each side delivers ``BENCH_EVENTS`` events per round to records made for the round
(untimed):

- applied: the record is in a step offering the transition. The workflow inserts the
  delivery row first (the unique ``(event, id)`` decides duplicates), locks the record,
  moves it through the engine (guarded ``UPDATE``, log row) and stores the outcome. The
  hand loop does the same statements through the ORM: insert the row, lock the record,
  update its step, create the log row, update the row's outcome, in one transaction.
- duplicate: the same event ids again (delivered untimed before): the insert fails on the
  constraint, a ``duplicate`` row is stored.
- buffered (workflow only): the record's step does not offer the transition; the event
  is kept.

Targets (docs/events.md): >= 2,000 applied/s and >= 5,000 duplicates/s per process, and
>= 0.5x the hand loop. The machine may be shared: compare ratios of the same run, not
absolute rates. ``BENCH_PROFILE=1`` prints a cProfile of one applied round.

    make bench BENCHMARKS=benchmarks/events.py    (starts PostgreSQL)
"""

import os
import sys
import time
from itertools import count
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("events")

import django

django.setup()

from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmarks import common
from benchmarks.benchapp.models import Remittance
from django_workflow import deliver
from django_workflow.models import EventDelivery, TransitionLog

ALIAS = "postgres"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
PER_ROUND = int(os.environ.get("BENCH_EVENTS", 1000))
TARGETS = {"applied": 2000, "duplicate": 5000}
serial = count()


def records(number):
    """``number`` fresh records in ``pending``; their keys."""
    batch = next(serial)
    refs = [f"r{os.getpid()}.{batch}.{n}" for n in range(number)]
    Remittance.objects.using(ALIAS).bulk_create([Remittance(ref=ref) for ref in refs])
    return refs


def timed(calls):
    started = time.perf_counter()
    for call in calls:
        call()
    return len(calls) / (time.perf_counter() - started)


def ours(ref, event_id):
    return lambda: deliver("bench.paid", ref, id=event_id)


def hand(ref, event_id):
    """The same work written by hand: the row first, then the record, the move, the log
    row and the outcome, in one transaction; a repeat stored as a duplicate."""

    def run():
        content_type = ContentType.objects.db_manager(ALIAS).get_for_model(Remittance)
        row = EventDelivery(
            event="bench.paid",
            event_id=event_id,
            key=ref,
            outcome="unmatched",
            content_type=content_type,
        )
        try:
            with transaction.atomic(using=ALIAS):
                row.save(using=ALIAS, force_insert=True)
                record = Remittance.objects.using(ALIAS).select_for_update().filter(ref=ref).first()
                now = timezone.now()
                moved = Remittance.objects.using(ALIAS).filter(pk=record.pk, state="pending")
                moved.update(state="paid", state_entered_at=now)
                TransitionLog.objects.using(ALIAS).create(
                    content_type=content_type,
                    object_id=str(record.pk),
                    from_state="pending",
                    to_state="paid",
                    transition_name="pay",
                    triggered_by="event",
                    data={"event": "bench.paid", "id": event_id},
                )
                rows = EventDelivery.objects.using(ALIAS).filter(pk=row.pk)
                rows.update(outcome="applied", object_id=str(record.pk), applied_at=now)
        except IntegrityError:
            row.pk, row.outcome = None, "duplicate"
            row.save(using=ALIAS, force_insert=True)

    return run


def applied(make):
    refs = records(PER_ROUND)
    return timed([make(ref, f"e.{ref}") for ref in refs])


def duplicate(make):
    refs = records(PER_ROUND)
    for ref in refs:
        make(ref, f"e.{ref}")()
    return timed([make(ref, f"e.{ref}") for ref in refs])


def buffered():
    refs = records(PER_ROUND)
    return timed([lambda ref=ref: deliver("bench.cleared", ref, id=f"c.{ref}") for ref in refs])


SIDES = {
    "applied, django_workflow": lambda: applied(ours),
    "applied, hand loop": lambda: applied(hand),
    "duplicate, django_workflow": lambda: duplicate(ours),
    "duplicate, hand loop": lambda: duplicate(hand),
    "buffered, django_workflow": buffered,
}


def check():
    """Each side did what it claims: every record paid once, outcomes as counted."""
    outcomes = EventDelivery.objects.using(ALIAS).values_list("outcome", flat=True)
    stored = {o: 0 for o in ("applied", "duplicate", "buffered")}
    for outcome in outcomes:
        stored[outcome] = stored.get(outcome, 0) + 1
    made = ROUNDS * PER_ROUND
    assert stored == {"applied": 4 * made, "duplicate": 2 * made, "buffered": made}, stored
    assert not Remittance.objects.using(ALIAS).exclude(state__in=["paid", "pending"]).exists()


def main():
    common.use(ALIAS)
    call_command("migrate", database=ALIAS, verbosity=0)
    EventDelivery.objects.using(ALIAS).all().delete()
    TransitionLog.objects.using(ALIAS).all().delete()
    Remittance.objects.using(ALIAS).all().delete()
    ours("warm", "warm")()  # the content type and the compiled statements, once
    EventDelivery.objects.using(ALIAS).all().delete()
    results = common.alternate(SIDES, rounds=ROUNDS)
    check()
    if common.profiling():
        common.profile(lambda: applied(ours))
    print(f"Events delivered per second, one process, PostgreSQL ({common.machine()})")
    print(f"{PER_ROUND} per side and round, {ROUNDS} rounds: median [min-max]")
    for label, rates in results.items():
        print(f"  {label:<28} {common.spread(rates, digits=0)}/s")
    for kind, target in TARGETS.items():
        ours_rate = common.med(results[f"{kind}, django_workflow"])
        ratio = ours_rate / common.med(results[f"{kind}, hand loop"])
        ok = ours_rate >= target and ratio >= 0.5
        print(
            f"  {kind}: {ours_rate:,.0f}/s (target {target:,}), {ratio:.2f}x the hand loop "
            f"(target 0.5x): {common.verdict(ok)}"
        )


if __name__ == "__main__":
    main()
