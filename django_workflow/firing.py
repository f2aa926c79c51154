"""Running a unit of work: pick the due records and hand each to the engine.

Transition timeouts move whole batches: one claiming UPDATE per batch
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so any number of processes may
run the same work at once). Action timeouts and every fire record by record,
each in a transaction of its own, so a crash repeats at most the record in
flight and no other writer waits longer than one action. Automatic steps
are run one record at a time by the engine.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.utils import timezone

from . import engine, probes, retrying, stopping
from .events import Event, Trigger, WorkKind
from .scheduling import due_at
from .signals import work_fired
from .work import Work

logger = logging.getLogger(__name__)

BATCH_SIZE = 500
#: SQLite has one writer; another writer kept waiting retries after 1, 3, 8, 18, 33 and
#: 53 ms (SQLite's busy handler). After firing this long without a break the worker
#: pauses long enough for any such retry to land in the pause and get its turn.
SQLITE_BURST = 0.03
SQLITE_PAUSE = 0.03


class Pacer:
    """Gives other SQLite writers their turn while a worker fires record after record."""

    def __init__(self, db: str) -> None:
        self.sqlite = connections[db].vendor == "sqlite"
        self.since = time.monotonic()

    def tick(self) -> None:
        if self.sqlite and time.monotonic() - self.since >= SQLITE_BURST:
            time.sleep(SQLITE_PAUSE)
            self.since = time.monotonic()


def run_work(
    model: Any, work_name: str, *, now: datetime | None = None, batch_size: int = BATCH_SIZE
) -> int:
    """Fire ``work_name`` for every record of ``model`` due at ``now``; return how many fired."""
    work = model.workflow.work(work_name)
    now = now or timezone.now()
    db = router.db_for_write(model)
    if not probes.due(model, [work], now, db):  # an idle poll is this one indexed query
        return 0
    if work.kind == WorkKind.STEP:
        fired = _run_steps(model, work, now, db, batch_size)
    elif work.transition_to is not None:
        fired = _run_transitions(model, work, now, db, batch_size)
    else:
        fired = _run_actions(model, work, now, db, batch_size)
    if fired:
        logger.info("%s: %s fired for %d record(s)", model._meta.label, work.name, fired)
        work_fired.send(sender=model, work=work.name, count=fired)
    return fired


def _matching(model: Any, work: Work, now: datetime, db: str, skip: set[Any]) -> Any:
    rows = probes.matching(model, work, now, db)
    return rows.exclude(pk__in=skip) if skip else rows


def _batches(model: Any, work: Work, now: datetime, db: str, batch_size: int, skip: set[Any]):
    """Keys of matching records, a batch at a time, until none are left or the worker stops."""
    while not stopping.requested():
        pks = list(_matching(model, work, now, db, skip).values_list("pk", flat=True)[:batch_size])
        yield pks
        if len(pks) < batch_size:
            return


def _run_steps(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> int:
    moved, skip, pacer = 0, set(), Pacer(db)
    for pks in _batches(model, work, now, db, batch_size, skip):
        for pk in pks:
            pacer.tick()
            if engine.run_step(model, pk, work.step, now=now) is None:
                skip.add(pk)
            else:
                moved += 1
    return moved


def _run_transitions(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> int:
    """Transition timeouts move whole batches with one UPDATE."""
    changes = engine.entry_changes(model.workflow, work.transition_to, now)
    event = Event(work.step, work.transition_to, work.entity, Trigger.TIMEOUT)
    fired, skip, pacer = 0, set(), Pacer(db)
    while not stopping.requested():
        pacer.tick()
        with transaction.atomic(using=db):
            claim = _matching(model, work, now, db, skip).select_for_update(skip_locked=True)
            claim = claim[:batch_size]
            if work.exact:
                claimed = moved = engine.move_many(model, claim, changes, event, db)
            else:  # business days: the query is a pre-filter, due_at decides
                records = list(claim)
                claimed = [record.pk for record in records]
                due = [record.pk for record in records if _is_due(work, record, now)]
                skip.update(set(claimed) - set(due))
                rows = model._base_manager.using(db).filter(pk__in=due)
                moved = engine.move_many(model, rows, changes, event, db) if due else []
        fired += len(moved)
        if len(claimed) < batch_size:
            break
    return fired


def _is_due(work: Work, record: Any, now: datetime) -> bool:
    due = due_at(work, record, now)
    return due is not None and due <= now


def _run_actions(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> int:
    """Action timeouts and every: each record in a transaction of its own."""
    fired, skip, pacer = 0, set(), Pacer(db)
    for pks in _batches(model, work, now, db, batch_size, skip):
        attempts = _attempts(model, work, pks, now, db)
        for pk in pks:
            row = attempts.get(pk)
            if stopping.requested():
                break
            pacer.tick()
            if retrying.waiting(row, now) or not engine.fire(model, pk, work, now, db, row):
                skip.add(pk)
            else:
                fired += 1
    return fired


def _attempts(model: Any, work: Work, pks: list[Any], now: datetime, db: str) -> dict[Any, Any]:
    """The attempt rows of this round for a batch (rare: only after failures)."""
    found = retrying.rows(model, db).filter(work=work.name, object_id__in=[str(pk) for pk in pks])
    if not found.exists():
        return {}
    records = model.workflow.queryset(db).in_bulk(pks)
    rounds = {pk: due_at(work, record, now) for pk, record in records.items()}
    return retrying.current(model, work, {pk: due for pk, due in rounds.items() if due}, db)
