"""Writing the stored due instant: ``next_due_at`` of records, computed again.

The one writer of ``next_due_at`` besides a move (which writes it with the
entry): after a firing or a failure, after ``QuerySet.update()`` moved what a
deadline counts from, for records a poll found with nothing due, for parents a
join re-check left waiting, and for every record when the worker starts after
the declaration of deadlines changed.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Q
from django.utils import timezone

from ..model.columns import NEXT_DUE_AT
from ..model.versions import workflow_of
from ..models import DeadlineDeclaration
from ..process.pacing import turn
from ..reading import attempts_read
from ..scheduling import due_at
from ..work import names
from ..work.due_instants import HALTED, fingerprint, next_due

logger = logging.getLogger("django_workflow.deadlines")

BATCH_SIZE = 1000
#: Recomputing every record after a declaration changed, on SQLite: short write
#: transactions, each in a turn of the worker's (``pacing``), so other writers get theirs.
SQLITE_BATCH_SIZE = 50


def reschedule(model: Any, pks: Iterable[Any], db: str, now: datetime | None = None) -> int:
    """Compute and store ``next_due_at`` of the records ``pks``, a locked batch at a time,
    minding deadlines waiting for a retry or halted. Returns how many rows changed."""
    if not model.workflow.has_deadlines:
        return 0
    keys, changed = list(pks), 0
    for start in range(0, len(keys), BATCH_SIZE):
        with transaction.atomic(using=db):
            rows = model.workflow.queryset(db).select_for_update()
            records = list(rows.filter(pk__in=keys[start : start + BATCH_SIZE]))
            changed += store(model, records, db, now, _waits(model, records, now, db))
    return changed


def _waits(model: Any, records: list[Any], now: datetime | None, db: str) -> dict[Any, Any]:
    """Per record, its deadlines whose attempts in the current round wait or halted."""
    by_key = {str(record.pk): record for record in records}
    attempts = attempts_read.rows(model, db).filter(object_id__in=list(by_key))
    waits: dict[Any, dict[str, Any]] = {}
    now = now or timezone.now()
    for row in attempts.exclude(work__startswith=names.STEP_PREFIX):
        record = by_key[row.object_id]
        work = next((w for w in model.workflow.all_works if w.name == row.work), None)
        if work is None or due_at(work, record, now) != row.round_key:
            continue  # a deadline no longer declared, or an attempt of an earlier round
        if row.halted:
            waits.setdefault(record.pk, {})[work.name] = HALTED
        elif row.retry_at is not None and row.retry_at > now:
            waits.setdefault(record.pk, {})[work.name] = row.retry_at
    return waits


def store(model: Any, records: list[Any], db: str, now: datetime | None = None, waits=None) -> int:
    """Write the recomputed ``next_due_at`` of loaded (and locked) records where it changed.

    A record in a step its declaration does not have is left as stored: its
    deadlines are unknown until a migration (``RenameStep``, ``MoveRecords``)
    puts it back into a declared step, which computes them again.
    """
    stale = []
    state = model.workflow.state_attribute
    for record in records:
        if getattr(record, state) not in workflow_of(record).steps:
            continue
        due = next_due(record, now, (waits or {}).get(record.pk))
        if due != getattr(record, NEXT_DUE_AT):
            setattr(record, NEXT_DUE_AT, due)
            stale.append(record)
    if stale:
        model._base_manager.using(db).bulk_update(stale, [NEXT_DUE_AT], batch_size=500)
    return len(stale)


def rearm(model: Any, records: list[Any], work: Any, at: datetime, db: str, now: datetime) -> int:
    """After a re-check that left the loaded (and locked) ``records`` where they were:
    ``work`` is due again at ``at``, their other deadlines as they stand."""
    waits = _waits(model, records, now, db)
    for record in records:
        waits.setdefault(record.pk, {})[work.name] = at
    return store(model, records, db, now, waits)


def postpone(model: Any, pk: Any, work: Any, wait: Any, db: str) -> None:
    """After a failed attempt of a deadline: due again at its retry (``wait``), or not
    at all once it halted (``HALTED``), as far as this deadline is concerned."""
    if work.deadline is None or not model.workflow.has_deadlines:
        return
    rows = model.workflow.queryset(db).filter(pk=pk, **{model.workflow.state_attribute: work.step})
    record = rows.select_for_update().first()
    if record is not None:
        store(model, [record], db, waits={pk: {work.name: wait}})


def catch_up(models: Iterable[Any]) -> dict[str, int]:
    """Recompute every record's ``next_due_at`` for models whose declaration of deadlines
    changed since the last worker start (or that never had it computed)."""
    done = {}
    for model in models:
        if not model.workflow.has_deadlines:
            continue
        db = router.db_for_write(model)
        current, label = fingerprint(model), model._meta.label
        stored = DeadlineDeclaration.objects.using(db).filter(model=label).first()
        if stored is not None and stored.fingerprint == current:
            continue
        with _one_worker(db, label) as mine:
            if not mine:  # another worker recomputes; this one goes on to its polls
                logger.info("%s: its deadlines changed; another worker recomputes them", label)
                continue
            # A first start computes what entering the steps already stored: worth no INFO line.
            level = logging.DEBUG if stored is None else logging.INFO
            logger.log(
                level, "%s: its deadlines changed; computing next_due_at of every record", label
            )
            done[label] = _recompute(model, db)
            DeadlineDeclaration.objects.using(db).update_or_create(
                model=label, defaults={"fingerprint": current}
            )
    return done


def _recompute(model: Any, db: str) -> int:
    """``reschedule`` every record concerned; on SQLite in small batches, each in a turn of
    the worker's, so other writers (web requests, workers) get theirs between them."""
    workflow = model.workflow
    concerned = Q(**{f"{workflow.state_attribute}__in": list(workflow.deadline_works)})
    concerned |= Q(**{f"{NEXT_DUE_AT}__isnull": False})
    rows = model._base_manager.using(db).filter(concerned).order_by("pk")
    keys = list(rows.values_list("pk", flat=True))
    if connections[db].vendor != "sqlite":
        return reschedule(model, keys, db)
    changed = 0
    for start in range(0, len(keys), SQLITE_BATCH_SIZE):
        with turn(db):
            changed += reschedule(model, keys[start : start + SQLITE_BATCH_SIZE], db)
    return changed


@contextmanager
def _one_worker(db: str, label: str) -> Iterator[bool]:
    """Whether this worker is the one that recomputes ``label`` now (PostgreSQL: a session
    advisory lock, tried without waiting; SQLite has one writer anyway)."""
    connection = connections[db]
    if connection.vendor != "postgresql":
        yield True
        return
    key = int.from_bytes(hashlib.sha256(f"workflow-recompute:{label}".encode()).digest()[:8])
    key -= 1 << 63 if key >= 1 << 63 else 0  # a signed bigint
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
        mine = cursor.fetchone()[0]
    try:
        yield mine
    finally:
        if mine:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
