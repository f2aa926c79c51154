"""The automatic-step safety net reaches every waiting record with 5,000 halted ones present.

What it shows, on PostgreSQL: ``Intake`` has an automatic step ``intake``.
Its table holds ``BENCH_ROWS`` rows (default 1,000,000; all but the ones
below moved on to ``done``/``archived``), and in ``intake``, shuffled by key:

- ``BENCH_HALTED`` (5,000) records whose attempts are spent (halted);
- 300 backing off (``retry_at`` in an hour) and 300 with an attempt running
  on a live worker (``alive_until`` in an hour);
- 200 that entered 10 s ago (inside ``STEP_GRACE``);
- ``BENCH_WAITING`` (800) that waited an hour with no attempt: the ones to queue.

``polling.poll(label, ["step:intake"])`` runs with ``enqueue_step`` replaced
by a recorder (so nothing runs them). Target: it queues exactly the waiting
records, none of the others, in one poll. Then the same poll's cost, in
rounds: with the waiting records present; once they have moved on (the
idle tick of a model with 5,000 halted records); and once every record has
left the automatic step (the idle tick of a model whose automatic step is
empty). The three states cannot coexist, so these rounds are not alternated.

    make bench BENCHMARKS=benchmarks/safety_net.py
"""

import os
import random
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("safety_net")

import django

django.setup()

from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from benchmarks import common
from benchmarks.benchapp.models import Intake
from django_workflow.models import WorkAttempt
from django_workflow.worker.schedulers import polling

ALIAS = "postgres"
HALTED = int(os.environ.get("BENCH_HALTED", 5_000))
WAITING = int(os.environ.get("BENCH_WAITING", 800))
TICKS = int(os.environ.get("BENCH_TICKS", 50))
LABEL = Intake._meta.label


def moved_on(index, rng):
    return {"state": "done" if index % 3 else "archived", "state_entered_at": common.NOW}


def populate():
    """The intake records: created through the ORM (they enter the step), then aged by SQL."""
    now = timezone.now()
    kinds = (
        ["halted"] * HALTED
        + ["backing off"] * 300
        + ["running"] * 300
        + ["fresh"] * 200
        + ["waiting"] * WAITING
    )
    random.Random(5).shuffle(kinds)
    rows = Intake.objects.using(ALIAS).bulk_create([Intake() for _ in kinds], batch_size=2000)
    by_kind = {}
    for record, kind in zip(rows, kinds, strict=True):
        by_kind.setdefault(kind, []).append(record.pk)
    hour_ago, grace = now - timedelta(hours=1), now - timedelta(seconds=10)
    aged = Intake._base_manager.using(ALIAS)
    aged.exclude(pk__in=by_kind["fresh"]).filter(state="intake").update(state_entered_at=hour_ago)
    aged.filter(pk__in=by_kind["fresh"]).update(state_entered_at=grace)
    content_type = ContentType.objects.db_manager(ALIAS).get_for_model(Intake)
    common_values = {"content_type": content_type, "work": "step:intake", "round_key": hour_ago}
    attempts = []
    for pk in by_kind["halted"]:
        attempts.append(WorkAttempt(object_id=str(pk), attempts=3, halted=True, **common_values))
    for pk in by_kind["backing off"]:
        retry = now + timedelta(hours=1)
        attempts.append(WorkAttempt(object_id=str(pk), attempts=1, retry_at=retry, **common_values))
    for pk in by_kind["running"]:
        attempts.append(
            WorkAttempt(
                object_id=str(pk),
                holder="node",
                running_since=now,
                alive_until=now + timedelta(hours=1),
                **common_values,
            )
        )
    WorkAttempt.objects.using(ALIAS).bulk_create(attempts, batch_size=2000)
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {Intake._meta.db_table}")
        cursor.execute(f"VACUUM ANALYZE {WorkAttempt._meta.db_table}")
    return by_kind


def recording_poll():
    queued = []
    original = polling.enqueue_step
    polling.enqueue_step = lambda label, pk, step, queue: queued.append(pk)
    try:
        polling.poll(LABEL, ["step:intake"])
    finally:
        polling.enqueue_step = original
    return queued


def timed_poll():
    original = polling.enqueue_step
    polling.enqueue_step = lambda *args: None
    try:
        return common.per_call(lambda: polling.poll(LABEL, ["step:intake"]), TICKS, 2.0, least=10)
    finally:
        polling.enqueue_step = original


def main():
    print(f"machine: {common.machine()}")
    common.use(ALIAS)
    call_command("migrate", database=ALIAS, verbosity=0)
    WorkAttempt.objects.using(ALIAS).all().delete()
    bulk = common.ROWS - HALTED - 800 - WAITING
    seconds = common.load(Intake, ALIAS, bulk, moved_on)
    by_kind = populate()
    total = Intake._base_manager.using(ALIAS).count()
    print(
        f"Intake: {total:,} rows ({seconds:.0f} s); in the automatic step: "
        + ", ".join(f"{kind} {len(keys):,}" for kind, keys in by_kind.items())
    )
    queued = recording_poll()
    reached = set(queued) & set(by_kind["waiting"])
    wrong = set(queued) - set(by_kind["waiting"])
    ok = len(reached) == len(by_kind["waiting"]) and not wrong and len(queued) == len(set(queued))
    print(
        f"one poll queued {len(queued):,}: {len(reached):,} of {len(by_kind['waiting']):,} "
        f"waiting, {len(wrong)} others   target: all waiting, no others  {common.verdict(ok)}"
    )
    with_waiting = common.alternate({"poll, 800 waiting": timed_poll})
    Intake._base_manager.using(ALIAS).filter(pk__in=by_kind["waiting"]).update(state="done")
    idle = common.alternate({"poll, none waiting": timed_poll})
    Intake._base_manager.using(ALIAS).filter(state="intake").update(state="done")
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {Intake._meta.db_table}")
    empty = common.alternate({"poll, step empty": timed_poll})
    for label, values in (*with_waiting.items(), *idle.items(), *empty.items()):
        print(
            f"  {label:<22}{common.spread(values, 1e3, 2):>26} ms per poll "
            f"(median [min-max] of {common.ROUNDS} rounds)"
        )
    print(f"machine at the end: {common.machine()}")


if __name__ == "__main__":
    main()
