"""Failures, retries and firing: what a spent attempt leads to, and what a deadline does
(automatic steps run in ``steps``)."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..errors import (
    TimeLimitExceeded,
    error_summary,
    error_text,
)
from ..model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from ..model.triggers import Event, Trigger
from ..process import meters, traces
from ..reading import attempts_read
from ..scheduling import count_after_firing, due_at
from ..signals import work_failed, work_halted
from ..work import Work, due_instants, rearming
from . import attempts
from .action_saves import collecting, field_values, saved_by, saves_visibly
from .moves import apply, database, entry_changes, log_event, move, write, write_columns
from .rescheduling import postpone
from .sql import probes, writes

logger = logging.getLogger("django_workflow.engine")


#: What an action may raise and still count as a failed attempt (a time limit included).
ACTION_FAILURES = (Exception, TimeLimitExceeded)


def attempt_failed(
    record: Any, work: Work, attempt: int, error: BaseException, db: str, due: Any = None
) -> str | None:
    """Retry after the backoff, take ``on_error``, or halt, by what is left of the budget.

    ``due`` is the round of a deadline (its due instant); an automatic step's
    round is its entry. Every failed attempt, whatever follows, is one WARNING
    line. Returns the step taken on error, or ``None``.
    """
    model = type(record)
    round_key = due or getattr(record, STATE_ENTERED_AT)
    text = error_text(error)
    name = work.entity
    traces.failed(record, work, attempt, error)
    if attempt < work.retry.max_attempts:
        wait = attempts_read.backoff(work.retry, attempt)
        retry_at = timezone.now() + wait
        attempts.record_failure(model, record.pk, work, round_key, attempt, retry_at, text, db)
        meters.attempted(model, work.name, meters.Outcome.FAILED, db)
        postpone(model, record.pk, work, retry_at, db)
        log_event(record, Event(work.step, work.step, name, Trigger.FAILED, None, error, attempt))
        announce_failure(record, work, attempt, error, db, (wait, retry_at))
        return None
    on_error = work.on_error(model.workflow)
    if on_error is None:
        attempts.record_failure(model, record.pk, work, round_key, attempt, None, text, db)
        meters.attempted(model, work.name, meters.Outcome.HALTED, db)
        postpone(model, record.pk, work, due_instants.HALTED, db)
        log_event(record, Event(work.step, work.step, name, Trigger.HALTED, None, error, attempt))
        announce_failure(record, work, attempt, error, db, None)
        return None
    attempts.forget(model, record.pk, work, db)
    meters.attempted(model, work.name, meters.Outcome.ERROR_PATH, db)
    guard = {model.workflow.state_attribute: work.step}
    event = Event(work.step, on_error, name, Trigger.ERROR_PATH, None, error, attempt)
    move(record, guard, entry_changes(model.workflow, on_error, timezone.now()), event)
    _log_failure(record, work, attempt, error, f"on_error: {on_error}")
    return on_error


def announce_failure(
    record: Any, work: Work, attempt: int, error: BaseException, db: str, retry: Any
) -> None:
    """After a spent attempt: ``work_failed`` (``retry`` is the backoff and the instant it
    ends) or ``work_halted`` (``retry`` is ``None``) once the transaction commits, and the
    WARNING line."""
    if retry is None:
        _send_after_commit(work_halted, record, work, attempt, error, db)
        _log_failure(record, work, attempt, error, "halted")
        return
    wait, retry_at = retry
    _send_after_commit(work_failed, record, work, attempt, error, db, retry_at=retry_at)
    _log_failure(record, work, attempt, error, _next_attempt(type(record), work, wait, retry_at))


def _log_failure(record: Any, work: Work, attempt: int, error: BaseException, then: str) -> None:
    """The one WARNING line of a failed attempt; its traceback, if it has one, at DEBUG."""
    label, budget = type(record)._meta.label, work.retry.max_attempts
    logger.warning(
        "%s %s: %s failed, attempt %d of %d: %s (%s)",
        *(label, record.pk, work.name, attempt, budget, error_summary(error), then),
    )
    if error.__traceback__ is not None:
        logger.debug(
            "%s %s: %s attempt %d of %d, traceback:",
            *(label, record.pk, work.name, attempt, budget),
            exc_info=(type(error), error, error.__traceback__),
        )


def _next_attempt(model: Any, work: Work, wait: Any, retry_at: Any) -> str:
    """``next attempt with the poll at 09:01:00, the first after the 30 s backoff``."""
    runs = _instant(attempts_read.runs_at(model.workflow, work, retry_at))
    backoff = f"{wait.total_seconds():g} s"
    if attempts_read.polled(work):
        return f"next attempt with the poll at {runs}, the first after the {backoff} backoff"
    return f"next attempt at {runs}, after the {backoff} backoff"


def _instant(at: Any) -> str:
    """In the worker's local time, like the log line's own stamp; the date only if not today."""
    local, today = timezone.localtime(at), timezone.localdate()
    return local.strftime("%H:%M:%S" if local.date() == today else "%Y-%m-%d %H:%M:%S")


def _send_after_commit(
    signal: Any, record: Any, work: Work, attempt: int, error: BaseException, db: str, **extra: Any
) -> None:
    model = type(record)
    if signal.has_listeners(model):
        send = partial(
            signal.send,
            sender=model,
            pk=record.pk,
            work=work.name,
            attempt=attempt,
            error=error,
            **extra,
        )
        transaction.on_commit(send, using=db)


def fire(model: Any, pk: Any, work: Work, now: datetime, db: str, attempt_row: Any) -> bool:
    """Fire an action timeout or an every for one record, in a transaction of its own.

    The record is claimed with a row lock by its key alone (skipped when
    another process holds it), then ``due_at`` decides whether it is still
    due. The action's writes, the fired column and the log row commit
    together; a failure rolls them back and spends an attempt of this round.
    Returns whether it fired.
    """
    record = due = None
    try:
        with transaction.atomic(using=db):
            record = probes.locked(model, pk, db)
            due = due_at(work, record, now) if record is not None else None
            if due is None or due > now:
                return False
            before = field_values(record)
            attempt = attempt_row.attempts + 1 if attempt_row is not None else 1
            with collecting(record):
                with traces.action(record, work, Trigger.TIMEOUT, attempt):
                    getattr(record, work.action)()
                columns = _save_fired(record, work, now, before)
            if attempt_row is not None:
                attempts.forget(model, pk, work, db)
            entered = getattr(record, STATE_ENTERED_AT)  # in place: the stay it fires in
            event = Event(
                work.step, work.step, work.entity, Trigger.TIMEOUT, from_state_entered_at=entered
            )
            _write_fired(record, columns, event, db)
            meters.attempted(model, work.name, meters.Outcome.SUCCEEDED, db)
            meters.fired(model, [due], db)
        return True
    except ACTION_FAILURES as error:
        if record is None:
            raise
        attempt = (attempt_row.attempts if attempt_row else 0) + 1
        with transaction.atomic(using=db):
            attempt_failed(record, work, attempt, error, db, due=due)
        return False


def _save_fired(
    record: Any, work: Work, now: datetime, before: dict[str, Any]
) -> dict[str, Any] | None:
    """Save what the action set (through ``save()``) with the fired columns, in one UPDATE.

    A fired column whose anchor the action moved later stays clear: a new round began.
    When the action changed nothing, the model keeps Django's own ``save()`` and
    nobody listens to its save signals, only the workflow's columns are written, by
    one UPDATE of the locked row: nothing ``save()`` would add could be seen. Those
    columns are returned unwritten, for ``_write_fired`` to send with the log row.
    """
    rearmed = set(rearming.moved_anchors(record))
    fired = [c for c in work.fired_together or (work.last_fired_field,) if c not in rearmed]
    written = {**dict.fromkeys(fired, now), **count_after_firing(work, record)}
    for column, value in written.items():
        setattr(record, column, value)
    model = type(record)
    if field_values(record, before) == before and not saves_visibly(model):
        if model.workflow.has_deadlines:
            written[NEXT_DUE_AT] = due_instants.next_due(record, now)
        return written
    changes = {**saved_by(record), **written}
    db = database(record)
    write(model._base_manager.using(db).filter(pk=record.pk), changes, db)
    apply(record, changes)
    return None


def _write_fired(record: Any, columns: dict[str, Any] | None, event: Event, db: str) -> None:
    """The fired ``columns`` (unless already saved) and the log row: one statement where
    the database allows and no ``save()`` runs."""
    if columns is None:
        log_event(record, event)
    elif writes.logs_quietly():
        write_columns(record, columns, db, event=event)
    else:
        write_columns(record, columns, db)
        log_event(record, event)
