"""``Step(on_enter=...)``: one effect owed per entry, run until it commits once.

Every entry into a step with ``on_enter`` writes a ``PendingEffect`` row in the
move's own transaction (``owe``): creation, a manual, bulk or automatic move,
a timeout, an error path, an undo or ``MoveRecords``. The row, not the
record's current step, is what is owed: the effect runs for it even when the
record has moved on since (the method is called on the record as it is now),
and the row is deleted in the transaction the effect's own writes commit in.
A failure rolls those back and spends an attempt of that entry (the step's
``retry``); a crash spends nothing. The entry's task runs it; the poll finds
what a lost task or a dead worker left, through the index of due rows.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any

from django.db import router, transaction
from django.utils import timezone

from .. import probes, retrying, stopping
from ..columns import ON_ENTER
from ..errors import error_summary, error_text
from ..events import Event, Trigger
from ..models import PendingEffect
from ..pacing import turn
from ..signals import work_failed, work_fired, work_halted
from ..work import names
from .moves import field_values, log_event
from .owed_effects import BATCH_SIZE, pending
from .running import ACTION_FAILURES

logger = logging.getLogger(__name__)


def run_for_record(model: Any, pk: Any, step: str, now: datetime | None = None) -> int:
    """The entry's task: run what is due of the effects ``record`` owes for entries into
    ``step``, oldest first; how many committed."""
    now = now or timezone.now()
    db = router.db_for_write(model)
    owed = pending(model, db).filter(object_id=str(pk), step=step, due_at__lte=now)
    effects = list(owed.order_by("id").values_list("id", flat=True))
    return _report(model, step, sum(run_one(model, effect, now, db) for effect in effects))


def run_due(
    model: Any,
    step: str,
    *,
    now: datetime | None = None,
    batch_size: int = BATCH_SIZE,
) -> int:
    """The poll: run every effect of ``step`` due at ``now`` (lost tasks, dead workers,
    retries whose backoff ended), soonest first; how many committed."""
    now = now or timezone.now()
    db = router.db_for_write(model)
    due = pending(model, db).filter(due_at__lte=now, step=step).order_by("due_at", "id")
    ran, after = 0, None
    while not stopping.requested():
        batch = list(_after(due, after).values_list("due_at", "id")[:batch_size])
        for _due, effect in batch:
            if stopping.requested():
                break
            with turn(db):  # on SQLite, other writers get theirs between effects
                ran += run_one(model, effect, now, db)
        if len(batch) < batch_size:
            break
        after = batch[-1]
    return _report(model, step, ran)


def _after(due: Any, after: tuple[datetime, int] | None) -> Any:
    """The rows of ``due`` past the ``(due_at, id)`` of the last batch: one index range."""
    if after is None:
        return due
    return due.filter(due_at__gte=after[0]).exclude(due_at=after[0], id__lte=after[1])


def run_one(model: Any, effect: int, now: datetime, db: str) -> bool:
    """Run the owed effect ``effect`` once, if it is due and nobody else runs it.

    The effect's row and the record are locked (skipped when another process
    holds either); the method runs on the record as it is now, what it set is
    saved, the log row written and the effect's row deleted, all in one
    transaction. Returns whether it committed.
    """
    record = row = None
    try:
        with transaction.atomic(using=db):
            row = _locked(model, effect, now, db)
            if row is None:
                return False
            record = probes.locked(model, row.object_id, db)
            if record is None:
                gone = not model._base_manager.using(db).filter(pk=row.object_id).exists()
                if gone:  # nothing left to run it on
                    row.delete()
                return False
            work = _work(model, row)
            before = field_values(record)
            getattr(record, work.action)()
            if field_values(record, before) != before:
                record.save()
            log_event(record, _event(row, Trigger.TIMEOUT))
            row.delete()
        return True
    except ACTION_FAILURES as error:
        if record is None:
            raise
        with transaction.atomic(using=db):
            _attempt_failed(model, record, effect, error, db)
        return False


def _locked(model: Any, effect: int, now: datetime, db: str) -> PendingEffect | None:
    rows = pending(model, db).select_for_update(skip_locked=True)
    return rows.filter(id=effect, due_at__lte=now).first()


def _work(model: Any, row: PendingEffect) -> Any:
    """The step's ``on_enter``; an error when the declaration no longer has it (a failed
    attempt that halts at once, for someone to look at)."""
    return model.workflow.work(names.entry_work(row.step))


def _event(row: PendingEffect, trigger: Trigger, **more: Any) -> Event:
    """In place, in the stay that entry began (the record may be elsewhere by now)."""
    return Event(
        row.step, row.step, ON_ENTER, trigger, from_state_entered_at=row.entered_at, **more
    )


def _attempt_failed(model: Any, record: Any, effect: int, error: BaseException, db: str) -> None:
    """Spend an attempt of the entry: wait for the backoff, or halt when none are left."""
    row = pending(model, db).select_for_update().filter(id=effect).first()
    if row is None:
        return
    try:
        work = _work(model, row)
    except Exception:  # the step no longer declares it
        work = None
    retry = work.retry if work is not None else None
    attempt = row.attempts + 1
    halted = retry is None or attempt >= retry.max_attempts
    retry_at = None if halted else timezone.now() + retrying.backoff(retry, attempt)
    row.attempts, row.due_at, row.last_error = attempt, retry_at, error_text(error)
    row.save(using=db)
    trigger = Trigger.HALTED if halted else Trigger.FAILED
    log_event(record, _event(row, trigger, error=error, attempt=attempt))
    name = names.entry_work(row.step)
    signal, extra = (work_halted, {}) if halted else (work_failed, {"retry_at": retry_at})
    if signal.has_listeners(model):
        send = partial(
            signal.send, sender=model, pk=record.pk, work=name, attempt=attempt, error=error
        )
        transaction.on_commit(partial(send, **extra), using=db)
    budget = retry.max_attempts if retry is not None else attempt
    then = "halted" if halted else f"next attempt with the poll from {retry_at:%H:%M:%S}"
    logger.warning(
        "%s %s: %s failed, attempt %d of %d: %s (%s)",
        *(model._meta.label, record.pk, name, attempt, budget, error_summary(error), then),
    )


def _report(model: Any, step: str, ran: int) -> int:
    """The one INFO line of a run that committed effects, and ``work_fired``."""
    if ran:
        name = names.entry_work(step)
        logger.info("%s: %s ran %d effect(s)", model._meta.label, name, ran)
        work_fired.send(sender=model, work=name, count=ran)
    return ran
