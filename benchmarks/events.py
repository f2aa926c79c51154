"""Events from outside delivered per second, one process, on PostgreSQL: ``deliver()``
and ``deliver_many()`` against hand-written loops doing the same writes, alternated in
rounds.

Each side delivers ``BENCH_EVENTS`` events per round to records made for the round
(untimed):

- applied: the record is in a step offering the transition. The workflow inserts the
  delivery row first (the unique ``(event, id)`` decides duplicates), locks the record,
  moves it through the engine (guarded ``UPDATE`` with its log row and the outcome, which
  also answers whether events its new step lets in are buffered: none are here).
- duplicate: the same event ids again (delivered untimed before): the insert finds the
  id taken, a ``duplicate`` row is stored and the record read.
- buffered (workflow only): the record's step does not offer the transition; the event
  is kept.

Two hand-written loops do the same writes, one delivery per transaction: through the ORM
(insert, lock, update, log row, outcome), and with psycopg directly (prepared statements:
``INSERT … ON CONFLICT DO NOTHING RETURNING``, ``SELECT … FOR UPDATE``, the log row in a
``WITH`` of the ``UPDATE``, the outcome's ``UPDATE``; a duplicate row when the id is
taken). The batched sides commit ``BENCH_BATCH`` deliveries per transaction:
``deliver_many()`` against the psycopg loop committing as often.

Targets (docs/events.md): >= 2,000 applied/s and >= 5,000 duplicates/s per process, and
>= 0.5x the hand-written (psycopg) loop. The machine may be shared: compare ratios of
the same run, not absolute rates. ``BENCH_PROFILE=1`` prints a cProfile of one applied
round.

    eval "$(scripts/postgres.sh start)"
    PYTHONPATH=$PWD .venv/bin/python benchmarks/events.py
    scripts/postgres.sh stop
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

import psycopg
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import IntegrityError, connections, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from benchmarks import common
from benchmarks.benchapp.models import Remittance
from django_workflow import deliver, deliver_many
from django_workflow.models import EventDelivery, TransitionLog

ALIAS = "postgres"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
PER_ROUND = int(os.environ.get("BENCH_EVENTS", 1000))
BATCH = int(os.environ.get("BENCH_BATCH", 100))
TARGETS = {"applied": 2000, "duplicate": 5000}
serial = count()


def records(number):
    """``number`` fresh records in ``pending``; their keys."""
    batch = next(serial)
    refs = [f"r{os.getpid()}.{batch}.{n}" for n in range(number)]
    Remittance.objects.using(ALIAS).bulk_create([Remittance(ref=ref) for ref in refs])
    return refs


def timed(calls, events=None):
    """Events per second running ``calls`` (``events`` of them in all; one per call)."""
    started = time.perf_counter()
    for call in calls:
        call()
    return (events or len(calls)) / (time.perf_counter() - started)


def ours(ref, event_id):
    return lambda: deliver("bench.paid", ref, id=event_id)


def orm(ref, event_id):
    """The same writes through the ORM: the row first, then the record, the move, the log
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
                    from_state_entered_at=record.state_entered_at,
                    data={"event": "bench.paid", "id": event_id},
                )
                rows = EventDelivery.objects.using(ALIAS).filter(pk=row.pk)
                rows.update(outcome="applied", object_id=str(record.pk), applied_at=now)
        except IntegrityError:
            row.pk, row.outcome = None, "duplicate"
            row.save(using=ALIAS, force_insert=True)

    return run


INSERT = (
    "INSERT INTO django_workflow_eventdelivery (event, event_id, key, outcome, "
    "content_type_id, object_id, delivered_at) VALUES (%s, %s, %s, %s, %s, '', now()) "
    "ON CONFLICT DO NOTHING RETURNING id"
)
LOCK = "SELECT id, state_entered_at FROM benchapp_remittance WHERE ref = %s FOR UPDATE"
MOVE = (
    "WITH logged AS (INSERT INTO django_workflow_transitionlog (content_type_id, object_id, "
    "from_state, to_state, transition_name, triggered_by, occurred_at, from_state_entered_at, "
    "actor_repr, error, comment, data) VALUES (%s, %s, 'pending', 'paid', 'pay', 'event', "
    "now(), %s, '', '', '', %s)) "
    "UPDATE benchapp_remittance SET state = 'paid', state_entered_at = now() "
    "WHERE id = %s AND state = 'pending'"
)
OUTCOME = (
    "UPDATE django_workflow_eventdelivery SET outcome = 'applied', object_id = %s, "
    "applied_at = now() WHERE id = %s"
)


class Psycopg:
    """The same writes with psycopg directly, prepared: what one would write by hand."""

    def __init__(self):
        params = connections[ALIAS].get_connection_params()
        self.connection = psycopg.connect(
            dbname=params["dbname"], user=params["user"], host=params["host"], port=params["port"]
        )
        self.content_type = ContentType.objects.db_manager(ALIAS).get_for_model(Remittance).pk

    def deliver(self, ref, event_id):
        execute = self.connection.execute
        row = execute(
            INSERT, ["bench.paid", event_id, ref, "unmatched", self.content_type], prepare=True
        ).fetchone()
        if row is None:  # the id came before
            execute(
                INSERT, ["bench.paid", event_id, ref, "duplicate", self.content_type], prepare=True
            )
            return
        pk, entered = execute(LOCK, [ref], prepare=True).fetchone()
        data = Jsonb({"event": "bench.paid", "id": event_id})
        execute(MOVE, [self.content_type, str(pk), entered, data, pk], prepare=True)
        execute(OUTCOME, [str(pk), row[0]], prepare=True)

    def one(self, ref, event_id):
        def run():
            self.deliver(ref, event_id)
            self.connection.commit()

        return run

    def many(self, pairs):
        def run():
            for ref, event_id in pairs:
                self.deliver(ref, event_id)
            self.connection.commit()

        return run


def batched(pairs):
    return [pairs[start : start + BATCH] for start in range(0, len(pairs), BATCH)]


def ours_many(pairs):
    events = [{"event": "bench.paid", "key": ref, "id": event_id} for ref, event_id in pairs]
    return lambda: deliver_many(events)


def applied(make):
    refs = records(PER_ROUND)
    return timed([make(ref, f"e.{ref}") for ref in refs])


def duplicate(make):
    refs = records(PER_ROUND)
    for ref in refs:
        make(ref, f"e.{ref}")()
    return timed([make(ref, f"e.{ref}") for ref in refs])


def applied_many(make):
    pairs = [(ref, f"e.{ref}") for ref in records(PER_ROUND)]
    return timed([make(batch) for batch in batched(pairs)], len(pairs))


def duplicate_many(make):
    pairs = [(ref, f"e.{ref}") for ref in records(PER_ROUND)]
    for batch in batched(pairs):
        make(batch)()
    return timed([make(batch) for batch in batched(pairs)], len(pairs))


def buffered():
    refs = records(PER_ROUND)
    return timed([lambda ref=ref: deliver("bench.cleared", ref, id=f"c.{ref}") for ref in refs])


def sides(raw):
    return {
        "applied, deliver()": lambda: applied(ours),
        "applied, ORM loop": lambda: applied(orm),
        "applied, psycopg loop": lambda: applied(raw.one),
        f"applied, deliver_many({BATCH})": lambda: applied_many(ours_many),
        f"applied, psycopg loop ({BATCH})": lambda: applied_many(raw.many),
        "duplicate, deliver()": lambda: duplicate(ours),
        "duplicate, ORM loop": lambda: duplicate(orm),
        "duplicate, psycopg loop": lambda: duplicate(raw.one),
        f"duplicate, deliver_many({BATCH})": lambda: duplicate_many(ours_many),
        f"duplicate, psycopg loop ({BATCH})": lambda: duplicate_many(raw.many),
        "buffered, deliver()": buffered,
    }


def check():
    """Each side did what it claims: every record paid once, outcomes as counted."""
    outcomes = EventDelivery.objects.using(ALIAS).values_list("outcome", flat=True)
    stored = {o: 0 for o in ("applied", "duplicate", "buffered")}
    for outcome in outcomes:
        stored[outcome] = stored.get(outcome, 0) + 1
    made = ROUNDS * PER_ROUND
    assert stored == {"applied": 10 * made, "duplicate": 5 * made, "buffered": made}, stored
    assert not Remittance.objects.using(ALIAS).exclude(state__in=["paid", "pending"]).exists()
    logged = TransitionLog.objects.using(ALIAS).filter(triggered_by="event").count()
    assert logged == 10 * made, logged


def verdicts(results):
    for kind, target in TARGETS.items():
        for ours_label, hand_label in (
            (f"{kind}, deliver()", f"{kind}, psycopg loop"),
            (f"{kind}, deliver_many({BATCH})", f"{kind}, psycopg loop ({BATCH})"),
        ):
            rate = common.med(results[ours_label])
            ratio = rate / common.med(results[hand_label])
            orm_ratio = rate / common.med(results[f"{kind}, ORM loop"])
            ok = rate >= target and ratio >= 0.5
            print(
                f"  {ours_label}: {rate:,.0f}/s (target {target:,}), {ratio:.2f}x the "
                f"{hand_label.split(', ')[1]} (target 0.5x), {orm_ratio:.2f}x the ORM loop: "
                f"{common.verdict(ok)}"
            )


def main():
    common.use(ALIAS)
    call_command("migrate", database=ALIAS, verbosity=0)
    EventDelivery.objects.using(ALIAS).all().delete()
    TransitionLog.objects.using(ALIAS).all().delete()
    Remittance.objects.using(ALIAS).all().delete()
    ours("warm", "warm")()  # the content type and the compiled statements, once
    EventDelivery.objects.using(ALIAS).all().delete()
    TransitionLog.objects.using(ALIAS).all().delete()
    results = common.alternate(sides(Psycopg()), rounds=ROUNDS)
    check()
    if common.profiling():
        common.profile(lambda: applied(ours))
    print(f"Events delivered per second, one process, PostgreSQL ({common.machine()})")
    print(f"{PER_ROUND} per side and round, {ROUNDS} rounds: median [min-max]")
    for label, rates in results.items():
        print(f"  {label:<34} {common.spread(rates, digits=0)}/s")
    verdicts(results)


if __name__ == "__main__":
    main()
