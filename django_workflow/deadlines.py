"""The stored due instant: ``next_due_at``, the soonest pending deadline of the current step.

It is computed in Python by ``due_at`` — the same arithmetic as the admin
and ``pending_deadlines()`` use, business days, time zones and holidays
included — whenever it can change: on entering a step, when a deadline
fires or fails, when ``save()`` or ``QuerySet.update()`` changes what a
deadline counts from, and when the worker starts after the declaration of
deadlines changed. A poll then asks one index one question, "due ≤ now?",
whatever the deadlines' kinds and however many rows the table has.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Q
from django.utils import timezone

from . import retrying
from .columns import NEXT_DUE_AT, STATE_ENTERED_AT
from .evaluation import referenced
from .models import DeadlineDeclaration
from .pacing import turn
from .scheduling import due_at
from .work import names

logger = logging.getLogger(__name__)

#: ``waits`` value for a deadline whose attempts are spent: it waits for nobody.
HALTED = object()
BATCH_SIZE = 1000
#: Recomputing every record after a declaration changed, on SQLite: short write
#: transactions, each in a turn of the worker's (``pacing``), so other writers get theirs.
SQLITE_BATCH_SIZE = 50


def next_due(
    record: Any,
    now: datetime | None = None,
    waits: dict[str, Any] | None = None,
    entry: bool = False,
) -> Any:
    """The soonest instant a deadline of ``record``'s current step falls due, or ``None``.

    ``waits`` maps a work's name to the instant its next attempt may start
    (after a failure) or to ``HALTED``. ``entry``: the record has just entered the
    step, so only the deadlines that can come first then are computed.
    """
    workflow = type(record).workflow
    now = now or timezone.now()
    soonest = None
    declared = workflow.entry_deadline_works if entry else workflow.deadline_works
    for work in declared.get(getattr(record, workflow.state_attribute), ()):
        due = due_at(work, record, now)
        wait = (waits or {}).get(work.name)
        if due is None or wait is HALTED:
            continue
        if wait is not None and wait > due:
            due = wait
        if soonest is None or due < soonest:
            soonest = due
    return soonest


def entering(record: Any, changes: dict[str, Any], now: datetime | None = None) -> Any:
    """``next_due`` of ``record`` once ``changes`` (an entry into a step) are applied."""
    if not type(record).workflow.has_deadlines:
        return None
    future = copy.copy(record)
    for name, value in changes.items():
        setattr(future, name, value)
    return next_due(future, now, entry=_unfired(future))


def _unfired(record: Any) -> bool:
    """Whether none of the current step's action timeouts is marked fired (a move clears
    them; a new record copied from another may carry them)."""
    workflow = type(record).workflow
    step = getattr(record, workflow.state_attribute)
    return all(getattr(record, name) is None for name in workflow.fired_fields(step))


def common_entry_due(model: Any, step: str, entered_at: datetime) -> tuple[bool, Any]:
    """``(True, due)`` when every record entering ``step`` at ``entered_at`` has the same
    ``next_due_at`` (each deadline counts from the entry, in the workflow's own zone
    and calendar); ``(False, None)`` when it depends on the record."""
    workflow = model.workflow
    for work in workflow.deadline_works.get(step, ()):
        if work.deadline.field != STATE_ENTERED_AT:
            return False, None
        if not work.exact and (workflow.time_zone_field or isinstance(workflow.holidays, str)):
            return False, None
    blank = model(**{workflow.state_attribute: step, STATE_ENTERED_AT: entered_at})
    return True, next_due(blank, entered_at, entry=True)


def refresh(model: Any, pks: Iterable[Any], db: str, now: datetime | None = None) -> int:
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
    attempts = retrying.rows(model, db).filter(object_id__in=list(by_key))
    waits: dict[Any, dict[str, Any]] = {}
    now = now or timezone.now()
    for row in attempts.exclude(work__startswith=names.STEP_PREFIX):
        record = by_key[row.object_id]
        work = next((w for w in model.workflow.works if w.name == row.work), None)
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
    steps, state = model.workflow.steps, model.workflow.state_attribute
    for record in records:
        if getattr(record, state) not in steps:
            continue
        due = next_due(record, now, (waits or {}).get(record.pk))
        if due != getattr(record, NEXT_DUE_AT):
            setattr(record, NEXT_DUE_AT, due)
            stale.append(record)
    if stale:
        model._base_manager.using(db).bulk_update(stale, [NEXT_DUE_AT], batch_size=500)
    return len(stale)


def postpone(model: Any, pk: Any, work: Any, wait: Any, db: str) -> None:
    """After a failed attempt of a deadline: due again at its retry (``wait``), or not
    at all once it halted (``HALTED``), as far as this deadline is concerned."""
    if work.deadline is None or not model.workflow.has_deadlines:
        return
    rows = model.workflow.queryset(db).filter(pk=pk, **{model.workflow.state_attribute: work.step})
    record = rows.select_for_update().first()
    if record is not None:
        store(model, [record], db, waits={pk: {work.name: wait}})


@cache
def watched(model: Any) -> frozenset[str]:
    """The fields whose change can move a due instant: the workflow's columns, what
    deadlines count from (calculations' fields included), ``time_zone_field``."""
    workflow = model.workflow
    names = set(workflow.owned_columns) - {NEXT_DUE_AT}
    for works in workflow.deadline_works.values():
        for work in works:
            anchor = work.deadline.field
            calculation = workflow.calculations.get(anchor)
            names |= referenced(calculation) if calculation is not None else {anchor}
    if workflow.time_zone_field:
        names.add(workflow.time_zone_field)
    return frozenset(names)


def moved_by(model: Any, values: Iterable[str]) -> bool:
    """Whether writing ``values`` may move a due instant (any field may, when a model
    method gives each record its holidays)."""
    return isinstance(model.workflow.holidays, str) or bool(watched(model) & set(values))


def fingerprint(model: Any) -> str:
    """What ``next_due_at`` is computed from: the steps, deadlines, zone and holidays declared."""
    workflow = model.workflow
    parts = [
        workflow.state_attribute,
        workflow.time_zone,
        str(workflow.time_zone_field),
        _stable(workflow.holidays),
        repr(sorted((name, _declared(works)) for name, works in workflow.deadline_works.items())),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _declared(works: Iterable[Any]) -> str:
    """The works' fields that differ from their defaults: a field a later release adds
    with a default leaves the fingerprint alone, so an upgrade recomputes nothing. The
    kind, the default of its class, is named all the same, as when one class held all."""
    return repr(
        [
            [
                (f.name, getattr(w, f.name))
                for f in fields(w)
                if f.name == "kind" or getattr(w, f.name) != f.default
            ]
            for w in works
        ]
    )


def _stable(value: Any) -> str:
    text = repr(value)
    return type(value).__qualname__ if " at 0x" in text else text


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
    """``refresh`` every record concerned; on SQLite in small batches, each in a turn of
    the worker's, so other writers (web requests, workers) get theirs between them."""
    workflow = model.workflow
    concerned = Q(**{f"{workflow.state_attribute}__in": list(workflow.deadline_works)})
    concerned |= Q(**{f"{NEXT_DUE_AT}__isnull": False})
    rows = model._base_manager.using(db).filter(concerned).order_by("pk")
    keys = list(rows.values_list("pk", flat=True))
    if connections[db].vendor != "sqlite":
        return refresh(model, keys, db)
    changed = 0
    for start in range(0, len(keys), SQLITE_BATCH_SIZE):
        with turn(db):
            changed += refresh(model, keys[start : start + SQLITE_BATCH_SIZE], db)
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
