"""``Step(on_enter=...)``: one effect owed per entry, run until it commits once.

Every entry into a step with ``on_enter`` writes a ``PendingEffect`` row in the
move's own transaction (``owe``): creation, a manual, bulk or automatic move,
a timeout, an error path, an undo or ``MoveRecords``. The row, not the
record's current step, is what is owed: the effect runs for it even when the
record has moved on since (the method is called on the record as it is now),
and the row is deleted in the transaction the effect's own writes commit in.
A failure, or the step's ``time_limit`` passing, rolls those back and spends
an attempt of that entry (the step's ``retry``), in the engine's words; a stop
or a crash spends nothing, but ``POISON_PILL`` of them in a row do. The entry's
task runs it; the poll finds what a lost task or a dead worker left, through
the index of due rows.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import router, transaction
from django.utils import timezone

from ..conf import workflow_settings
from ..errors import error_summary, error_text
from ..model.columns import ON_ENTER
from ..model.triggers import Event, Trigger
from ..models import PendingEffect
from ..process import meters, stopping, traces
from ..process.pacing import turn
from ..reading import attempts_read
from ..reading.owed_effects_read import pending
from ..signals import work_fired
from ..work import EntryWork, names
from .action_saves import field_values
from .attempts import interrupted_again
from .kind_engines import KindEngine, register
from .moves import log_event
from .owed_effects import BATCH_SIZE
from .running import ACTION_FAILURES, announce_failure
from .sql import probes
from .time_limits import time_limited

#: Named as in release 2, where projects configure it (docs/worker.md).
logger = logging.getLogger("django_workflow.effects")


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


@traces.unit_of_work
def run_one(model: Any, effect: int, now: datetime, db: str) -> bool:
    """Run the owed effect ``effect`` once, if it is due and nobody else runs it.

    The run is marked first, in a transaction of its own (``_claim``), so one cut
    short by a stop or a crash is told from a failure: it spends no attempt, and
    ``POISON_PILL`` of them in a row count as a failed one. Then the effect's row
    and the record are locked, the method runs on the record as it is now (stopped
    at the step's ``time_limit``), what it set is saved, the log row written and
    the effect's row deleted, all in one transaction. Returns whether it committed.
    """
    if not _claim(model, effect, now, db):
        return False
    settled = False
    try:
        ran = _run(model, effect, db)
        settled = True
        return ran
    finally:
        if not settled:  # stopped, or the failure could not be recorded: not spent
            _release(model, effect, db)


def _claim(model: Any, effect: int, now: datetime, db: str) -> bool:
    """Mark the run of ``effect`` begun, committed; whether the caller may run it now.

    A run still marked whose lease has passed was cut short: an interruption, and
    at ``POISON_PILL`` of them the attempt fails here, without running again.
    """
    with transaction.atomic(using=db):
        row = _locked(model, effect, now, db)
        if row is None:
            return False
        clock, work = timezone.now(), _declared(model, row)
        if row.running_since is not None:
            if row.alive_until is not None and row.alive_until > clock:
                return False  # running elsewhere, or only just begun
            row.running_since = row.alive_until = None
            failure = interrupted_again(row)
            if failure is not None:
                record = probes.locked(model, row.object_id, db)
                if record is not None:
                    _attempt_failed(model, record, row, work, failure, db)
                elif _gone(model, row, db):
                    row.delete()
                return False
        row.running_since, row.alive_until = clock, clock + _lease(work)
        row.save(using=db)
        return True


def _lease(work: Any) -> timedelta:
    """How long a marked run counts as alive. No heartbeat renews it: while the effect
    runs, its locked row keeps others away; the lease covers the instants before."""
    recovery = timedelta(seconds=workflow_settings.RECOVERY_AFTER)
    return recovery + (work.time_limit if work is not None and work.time_limit else timedelta(0))


def _run(model: Any, effect: int, db: str) -> bool:
    record = None
    try:
        with transaction.atomic(using=db):
            row = pending(model, db).select_for_update().filter(id=effect).first()
            if row is None:
                return False
            record = probes.locked(model, row.object_id, db)
            if record is None:
                if _gone(model, row, db):  # nothing left to run it on
                    row.delete()
                else:  # held by another transaction: not begun after all
                    row.running_since = row.alive_until = None
                    row.save(using=db)
                return False
            work = _work(model, row)
            before = field_values(record)
            span = traces.action(record, work, Trigger.TIMEOUT, row.attempts + 1)
            with time_limited(work.time_limit), span:
                getattr(record, work.action)()
            if field_values(record, before) != before:
                record.save()
            log_event(record, _event(row, Trigger.TIMEOUT))
            row.delete()
            meters.attempted(model, work.name, meters.Outcome.SUCCEEDED, db)
        return True
    except ACTION_FAILURES as error:
        if record is None:
            raise
        with transaction.atomic(using=db):
            row = pending(model, db).select_for_update().filter(id=effect).first()
            if row is not None:
                _attempt_failed(model, record, row, _declared(model, row), error, db)
        return False


def _gone(model: Any, row: PendingEffect, db: str) -> bool:
    return not model._base_manager.using(db).filter(pk=row.object_id).exists()


def _release(model: Any, effect: int, db: str) -> None:
    """This process gives the run up unfinished: it expires now, for the next run to take
    over as an interruption."""
    try:
        marked = pending(model, db).filter(id=effect, running_since__isnull=False)
        marked.update(alive_until=timezone.now())
    except Exception:  # its lease expires in time all the same
        logger.exception("%s: could not release effect %s", model._meta.label, effect)


def _locked(model: Any, effect: int, now: datetime, db: str) -> PendingEffect | None:
    rows = pending(model, db).select_for_update(skip_locked=True)
    return rows.filter(id=effect, due_at__lte=now).first()


def _work(model: Any, row: PendingEffect) -> Any:
    """The step's ``on_enter``; an error when the declaration no longer has it (a failed
    attempt that halts at once, for someone to look at)."""
    return model.workflow.newest_work(names.entry_work(row.step))


def _declared(model: Any, row: PendingEffect) -> Any:
    """The step's ``on_enter``, or ``None`` when the declaration no longer has it."""
    try:
        return _work(model, row)
    except Exception:
        return None


def _event(row: PendingEffect, trigger: Trigger, **more: Any) -> Event:
    """In place, in the stay that entry began (the record may be elsewhere by now)."""
    return Event(
        row.step, row.step, ON_ENTER, trigger, from_state_entered_at=row.entered_at, **more
    )


def _attempt_failed(
    model: Any, record: Any, row: PendingEffect, work: Any, error: BaseException, db: str
) -> None:
    """Spend an attempt of the entry, by the engine's rules and in its words: wait for
    the backoff, or halt when none are left (at once when the step no longer has it)."""
    attempt = row.attempts + 1
    halted = work is None or attempt >= work.retry.max_attempts
    wait = None if halted else attempts_read.backoff(work.retry, attempt)
    retry_at = None if wait is None else timezone.now() + wait
    row.attempts, row.due_at, row.last_error = attempt, retry_at, error_text(error)
    row.interruptions, row.running_since, row.alive_until = 0, None, None
    row.save(using=db)
    trigger = Trigger.HALTED if halted else Trigger.FAILED
    outcome = meters.Outcome.HALTED if halted else meters.Outcome.FAILED
    meters.attempted(model, names.entry_work(row.step), outcome, db)
    log_event(record, _event(row, trigger, error=error, attempt=attempt))
    if work is None:
        logger.warning(
            "%s %s: enter:%s failed and halted: the step no longer declares on_enter (%s)",
            *(model._meta.label, record.pk, row.step, error_summary(error)),
        )
        return
    announce_failure(record, work, attempt, error, db, None if halted else (wait, retry_at))


def retry_now(record: Any, effect: int) -> str | None:
    """Give ``record``'s halted effect ``effect`` a fresh budget, due now; the step it is
    owed for, or ``None`` when it is not halted (it ran, or was retried, since)."""
    model = type(record)
    db = record._state.db or router.db_for_write(model, instance=record)
    halted = pending(model, db).filter(id=effect, object_id=str(record.pk), due_at__isnull=True)
    with transaction.atomic(using=db):
        row = halted.select_for_update().first()
        if row is None:
            return None
        row.attempts = row.interruptions = 0
        row.due_at, row.last_error = timezone.now(), ""
        row.running_since = row.alive_until = None
        row.save(using=db)
    return row.step


def _report(model: Any, step: str, ran: int) -> int:
    """The one INFO line of a run that committed effects, and ``work_fired``."""
    if ran:
        name = names.entry_work(step)
        logger.info("%s: %s ran %d effect(s)", model._meta.label, name, ran)
        work_fired.send(sender=model, work=name, count=ran)
    return ran


register(
    EntryWork,
    KindEngine(
        run_alone=lambda picking, work: run_due(
            picking.model, work.step, now=picking.now, batch_size=picking.batch_size
        )
    ),
)
