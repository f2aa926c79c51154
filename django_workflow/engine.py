"""The engine: the only writer of a workflow's columns.

Every step change (manual, automatic, error path, timeout, undo, creation)
and every firing goes through here. A change is one database transaction:
the new step is written only if the row still holds what the caller saw, the
instance takes the new values, the log row is written beside it, and the
signal and any follow-up work go out after commit. ``firing`` picks the due
records; the transport (``queueing``) listens for entries into automatic
steps; neither writes a workflow column itself.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import router, transaction
from django.db.models import Q
from django.db.models.signals import post_save, pre_save
from django.utils import timezone

from . import deadlines, log_values, owed_effects, probes, rearming, retrying, statements
from .columns import NEXT_DUE_AT, STATE_ENTERED_AT
from .compiled import CompiledWorkflow
from .conditions import unmet_reason
from .declaration import Route, Transition
from .errors import (
    ConditionUnmet,
    DirectStepChange,
    NoRouteMatched,
    StaleRecord,
    TimeLimitExceeded,
    TransitionNotAllowed,
    UnsavedRecord,
    WorkflowPermissionDenied,
)
from .evaluation import holds, lookup_roots, referenced
from .events import Event, Trigger, WorkKind
from .models import TransitionLog
from .policies import allowed
from .scheduling import count_after_firing, due_at
from .signals import entered_step, step_changed, work_failed, work_halted
from .work import Work

logger = logging.getLogger(__name__)

#: What an action may raise and still count as a failed attempt (a time limit included).
ACTION_FAILURES = (Exception, TimeLimitExceeded)


# Manual transitions ---------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What a manual call of a transition on a record comes to, before anything is written."""

    transition: Transition
    step: str
    target: str
    #: The values the decision read: the write happens only if the row still holds them.
    guard: dict[str, Any]


def decide(
    record: Any, name: str, actor: Any, accepted: dict[str, Any], authorize: bool = True
) -> Decision:
    """Where ``record`` goes through transition ``name`` called by ``actor`` with
    ``accepted``; raises the error the call raises when it may not."""
    model = type(record)
    if record._state.adding:  # no row to move: the guarded write would find nothing
        raise UnsavedRecord(record, name)
    workflow: CompiledWorkflow = model.workflow
    step = getattr(record, workflow.state_attribute)
    declared = workflow.transition(step, name)
    if declared is None:
        raise TransitionNotAllowed(record, name, step)
    unexpected = sorted(set(accepted) - set(declared.accept))
    if unexpected:
        raise TypeError(
            f"{name}() got unexpected values {unexpected}; it accepts {list(declared.accept)}."
        )
    seen = _with_values(record, accepted)  # what policies, `when` and routes decide on
    if not available(seen, declared):
        raise ConditionUnmet(record, name, step, unmet_reason(declared, model))
    if authorize and not allowed(workflow.policy_for(step, name), actor, seen, name):
        raise WorkflowPermissionDenied(record, name, actor)
    target = choose_route(declared.routes or (Route(declared.to),), seen, database(record))
    if target is None:
        raise NoRouteMatched(record, name, step)
    guard = {workflow.state_attribute: step}
    read = _fields_read([*declared.routes, Route(step, declared.when)], model)
    for attname in sorted(read - set(accepted)):
        guard[attname] = getattr(record, attname)
    return Decision(declared, step, target, guard)


def run_transition(
    record: Any,
    name: str,
    *,
    actor: Any = None,
    authorize: bool = True,
    comment: str = "",
    data: Any = None,
    **accepted: Any,
) -> Any:
    """Move ``record`` through transition ``name`` of its current step; ``comment`` and
    ``data`` are stored on its log row."""
    comment, data = log_values.checked(comment, data)
    decision = decide(record, name, actor, accepted, authorize)
    changes = {**entry_changes(type(record).workflow, decision.target, timezone.now()), **accepted}
    event = Event(
        decision.step, decision.target, name, Trigger.MANUAL, actor, comment=comment, data=data
    )
    if decision.transition.action is not None:
        action = decision.transition.action
        return _move_with_action(record, decision.guard, changes, event, action, accepted)
    return move(record, decision.guard, changes, event)


def permits(record: Any, transition: Any, actor: Any, values: dict[str, Any]) -> bool:
    """Whether ``actor`` may call ``transition`` now with ``values``: its ``when`` and
    its policy, both seeing the record with the values applied."""
    seen = _with_values(record, values)
    workflow = type(record).workflow
    policy = workflow.policy_for(getattr(record, workflow.state_attribute), transition.name)
    return available(seen, transition) and allowed(policy, actor, seen, transition.name)


def available(record: Any, transition: Any) -> bool:
    """Whether ``Transition(when=...)`` holds for ``record`` (always, without ``when``)."""
    if transition.when is None:
        return True
    return _holds(transition.when, record, database(record))


def _move_with_action(
    record: Any,
    guard: dict[str, Any],
    changes: dict[str, Any],
    event: Event,
    action: str,
    accepted: dict[str, Any],
) -> Any:
    """``Transition(action=...)``: with the row locked and still as the caller saw it,
    run the method on the record holding the accepted values, save what it set, then
    move. An exception rolls all of it back and reaches the caller."""
    model, db = type(record), database(record)
    with transaction.atomic(using=db):
        rows = model._base_manager.using(db).filter(pk=record.pk, **guard)
        if not rows.select_for_update().exists():
            raise StaleRecord(record, tuple(guard))
        for name, value in accepted.items():
            setattr(record, name, value)
        with collecting(record):
            said = getattr(record, action)()
            saved = saved_by(record)
        if not event.comment and isinstance(said, str):  # the action's word for the log
            event = replace(event, comment=said)
        # The guard held under the lock, before the action: the action may change
        # what ``when`` and the routes read, so only the step is checked again.
        step = model.workflow.state_attribute
        move(record, {step: guard[step]}, {**saved, **changes}, event)
    return record


# Writing --------------------------------------------------------------------


def move(record: Any, guard: dict[str, Any], changes: dict[str, Any], event: Event) -> Any:
    """Write ``changes`` only if the row still holds ``guard``; log and announce.

    The instance holds the new values before anything is announced, so
    ``step_changed`` receivers see it in its new step.
    """
    db = database(record)
    model = type(record)
    if model.workflow.state_attribute in changes and model.workflow.has_deadlines:
        changes = {**changes, NEXT_DUE_AT: deadlines.entering(record, changes)}
    with transaction.atomic(using=db):
        event = replace(event, from_state_entered_at=getattr(record, STATE_ENTERED_AT))
        rows = model._base_manager.using(db).filter(pk=record.pk, **guard)
        if not write(rows, changes, db):
            raise StaleRecord(record, tuple(guard))
        apply(record, changes)
        _after_change(record, event, db)
    return record


def write(rows: Any, changes: dict[str, Any], db: str) -> int:
    """``UPDATE`` the row ``rows`` selects with ``changes``, between one ``pre_save`` and
    one ``post_save`` naming every column written (unless ``Workflow.save_signals`` is off).

    Both signals carry an instance holding exactly the written row: the stored row
    with ``changes`` applied, never the caller's instance and its unsaved edits.
    """
    model = rows.model
    if not _save_signals(model):
        return rows.update(**changes)
    written = rows.first()
    if written is None:
        return 0
    for name, value in changes.items():
        setattr(written, name, value)
    _pre_save(model, written, changes, db)
    count = rows.update(**changes)
    if count:
        _post_save(model, written, changes, db)
    return count


#: Set on an instance while the engine saves it: ``save()`` collects what it would write here.
COLLECTING = "_workflow_collecting"


@contextmanager
def collecting(record: Any) -> Iterator[dict[str, Any]]:
    """While open, ``record.save()`` (the model's own ``save()`` runs) writes nothing and
    sends nothing: what it would write is collected, for the engine to write with the step
    change in one ``UPDATE`` and one signal pair. An action that saves itself runs in it."""
    if COLLECTING in record.__dict__:  # already open: one collection
        yield record.__dict__[COLLECTING]
        return
    record.__dict__[COLLECTING] = collected = {}
    try:
        yield collected
    finally:
        record.__dict__.pop(COLLECTING, None)


def saved_by(record: Any) -> dict[str, Any]:
    """What ``record.save()`` would write, with what it already collected, unwritten."""
    with collecting(record) as collected:
        record.save()
    return dict(collected)


def _prepared(record: Any, names: Iterable[str]) -> dict[str, Any]:
    """The values a save writes for the fields ``names`` (``auto_now`` applied)."""
    values = {}
    for name in names:
        field = record._meta.get_field(name)
        values[field.attname] = field.pre_save(record, False)
    return values


def move_many(model: Any, claim: Any, changes: dict[str, Any], event: Event, db: str) -> list[Any]:
    """Write ``changes`` to every row ``claim`` selects; log and announce each; return the keys.

    Runs inside the caller's transaction, which holds the claim's row locks.
    """
    step = changes.get(model.workflow.state_attribute)
    per_record = False
    if step is not None and model.workflow.has_deadlines:
        same, due = deadlines.common_entry_due(model, step, changes[STATE_ENTERED_AT])
        changes = {**changes, NEXT_DUE_AT: due} if same else changes
        per_record = not same
    # The claim's rows are locked (or, on SQLite, the transaction writes alone): the
    # entry instants read here are still theirs when the UPDATE writes.
    entered = dict(claim.values_list("pk", STATE_ENTERED_AT))
    pks = list(entered)
    if not pks:
        return pks
    signals = _save_signals(model)
    if signals:
        for instance in model._base_manager.using(db).in_bulk(pks).values():
            _pre_save(model, _with_values(instance, changes), changes, db)
    model._base_manager.using(db).filter(pk__in=pks).update(**changes)
    if per_record:  # deadlines counted from the record's own fields, zone or calendar
        deadlines.refresh(model, pks, db)
    if signals:
        written = {**changes, NEXT_DUE_AT: None} if per_record else changes
        for instance in model._base_manager.using(db).in_bulk(pks).values():
            _post_save(model, instance, written, db)
    if model.workflow.log is True:
        rows = [
            _log_row(model, pk, replace(event, from_state_entered_at=entered[pk]), db) for pk in pks
        ]
        TransitionLog.objects.using(db).bulk_create(rows, batch_size=500)
    owed_effects.owe(model, step, [(pk, changes[STATE_ENTERED_AT]) for pk in pks], db)
    instances = {}
    if step_changed.has_listeners(model):
        instances = model._base_manager.using(db).in_bulk(pks)
    for pk in pks:
        _announce(model, pk, instances.get(pk), event, db)
    return pks


def _save_signals(model: Any) -> bool:
    """Whether step changes send ``pre_save``/``post_save`` (``Workflow.save_signals``)."""
    return model.workflow.save_signals and (
        pre_save.has_listeners(model) or post_save.has_listeners(model)
    )


def _pre_save(model: Any, instance: Any, written: dict[str, Any], db: str) -> None:
    fields = frozenset(written)
    pre_save.send(sender=model, instance=instance, raw=False, using=db, update_fields=fields)


def _post_save(model: Any, instance: Any, written: dict[str, Any], db: str) -> None:
    post_save.send(
        sender=model,
        instance=instance,
        created=False,
        update_fields=frozenset(written),
        raw=False,
        using=db,
    )


#: Owned columns the engine lets the next ``save()`` of an instance write (a firing's).
GRANTED = "_workflow_granted"


def create_record(
    record: Any, save: Callable[..., None], args: Any, fields: Any, kwargs: Any
) -> None:
    """``save()`` that inserts: the record enters its initial step, logged and announced.

    An instance given the key of an existing row is inserted, never updated:
    updating would rewind that record to the initial step.
    """
    if record.pk is not None and not kwargs.get("force_update"):
        kwargs = {**kwargs, "force_insert": True}
    starting(record)
    db = kwargs.get("using") or router.db_for_write(type(record), instance=record)
    with transaction.atomic(using=db):  # the row, its log row and what its entry owes
        save(*args, update_fields=fields, **kwargs)
        rearming.remember(record)
        records_created([record], using=record._state.db)


def starting(record: Any) -> None:
    """Put on a new instance the ``next_due_at`` of its initial step."""
    workflow = type(record).workflow
    if workflow.has_deadlines and workflow.initial_step is not None:
        entry = {workflow.state_attribute: workflow.initial_step}
        setattr(record, NEXT_DUE_AT, deadlines.entering(record, entry))


def save_record(
    record: Any, save: Callable[..., None], args: Any, fields: Any, kwargs: Any
) -> None:
    """``save()`` of an existing record: its own fields, never the workflow's columns.

    Assigning another step raises ``DirectStepChange``; an anchor moved later
    re-arms its action timeouts, and a changed due instant is stored, guarded
    by the step the instance was loaded in.
    """
    workflow: CompiledWorkflow = type(record).workflow
    db = kwargs.get("using") or database(record)
    loaded = _loaded_step(record, db)
    step = getattr(record, workflow.state_attribute)
    if loaded is not None and step != loaded:
        raise DirectStepChange(record, loaded, step)
    granted = record.__dict__.pop(GRANTED, ())
    guarded = dict.fromkeys(rearming.moved_anchors(record))
    for column in guarded:
        setattr(record, column, None)
    due = _due_if_changed(record, loaded)
    if due is not None:
        setattr(record, NEXT_DUE_AT, due[0])
        if granted:  # a firing holds the row lock: its UPDATE carries the due instant
            granted = [*granted, NEXT_DUE_AT]
        else:
            guarded[NEXT_DUE_AT] = due[0]
    fields = [*_own_fields(record, fields), *granted]
    collecting = record.__dict__.get(COLLECTING)
    if collecting is not None:  # the engine writes it (``saved_by``)
        collecting.update({**_prepared(record, fields), **guarded})
        return
    with transaction.atomic(using=db, savepoint=False):  # a firing's transaction is enough
        if fields:
            save(*args, update_fields=fields, **kwargs)
        if guarded and loaded is not None:
            rows = type(record)._base_manager.using(db).filter(pk=record.pk)
            rows.filter(**{workflow.state_attribute: loaded}).update(**guarded)
    rearming.remember(record)


def _due_if_changed(record: Any, loaded: str | None) -> tuple[Any] | None:
    """``(due,)`` when the instance's deadlines fall due at another instant than stored."""
    if loaded is None or not type(record).workflow.has_deadlines:
        return None
    due = deadlines.next_due(record)
    if NEXT_DUE_AT not in record.__dict__:  # deferred: the stored value is unknown
        return (due,)
    return None if due == record.__dict__[NEXT_DUE_AT] else (due,)


def _loaded_step(record: Any, db: str) -> str | None:
    """The step the instance was loaded in; read again when it was deferred, then assigned."""
    loaded = rearming.loaded_step(record)
    attribute = type(record).workflow.state_attribute
    if loaded is None and attribute in record.__dict__:
        rows = type(record)._base_manager.using(db).filter(pk=record.pk)
        loaded = rows.values_list(attribute, flat=True).first()
    return loaded


def _own_fields(record: Any, fields: Iterable[str] | None) -> list[str]:
    """The fields a save writes, less the workflow's columns and any deferred field."""
    owned = type(record).workflow.owned_columns
    if fields is None:
        deferred = record.get_deferred_fields()
        fields = [
            field.name
            for field in record._meta.concrete_fields
            if not field.primary_key
            and not getattr(field, "generated", False)
            and field.attname not in deferred
        ]
    by_attname = {f.attname: f.name for f in record._meta.concrete_fields}
    return [name for name in fields if by_attname.get(name, name) not in owned]


def entry_changes(workflow: CompiledWorkflow, step: str, now: datetime) -> dict[str, Any]:
    """What entering ``step`` writes: the step, the entry instant, fresh action timeouts."""
    changes = {workflow.state_attribute: step, STATE_ENTERED_AT: now}
    changes.update(dict.fromkeys(workflow.fired_fields(step)))
    return changes


def apply(record: Any, changes: dict[str, Any]) -> None:
    """Put values the engine wrote onto the instance."""
    for name, value in changes.items():
        setattr(record, name, value)
    rearming.remember(record)


# Automatic steps ------------------------------------------------------------


def run_step(model: Any, pk: Any, step: str, *, now: datetime | None = None) -> str | None:
    """Run automatic step ``step`` for the record ``pk`` if it is still there.

    The attempt is marked running first, in a transaction of its own. Then the
    action, the route it leads to and the new step commit together. An
    exception, a route miss or the time limit rolls the action back and spends
    the attempt: it is retried per the step's ``Retry``, and when the attempts
    run out the record takes ``on_error`` or stays, halted. A stop or a crash
    spends nothing: the attempt is released and runs again. Returns the step
    the record moved to, or ``None`` when it did not move.
    """
    workflow: CompiledWorkflow = model.workflow
    declared = workflow.steps.get(step)
    if declared is None or not declared.is_automatic:
        return None
    work = workflow.work(f"step:{step}")
    now = now or timezone.now()
    db = router.db_for_write(model)
    rows = model._base_manager.using(db).filter(pk=pk, **{workflow.state_attribute: step})
    entered = rows.values_list(STATE_ENTERED_AT, flat=True).first()
    if entered is None:  # moved on, or gone, since it was queued
        return None
    claim = retrying.start_attempt(model, pk, work, entered, now, db)
    if claim is None:
        return None
    in_round = rows.filter(**{STATE_ENTERED_AT: entered})
    settled = False
    try:
        if claim.failure is not None:  # interrupted too often, or past its time limit
            target = _fail_attempt(in_round, pk, work, claim.number, claim.failure, db)
        else:
            target = _run_action(in_round, pk, work, claim.number, db)
        settled = True
        return target
    finally:
        if not settled:  # stopped, or the failure could not be recorded: not spent
            _release(model, pk, work, db)


def _run_action(rows: Any, pk: Any, work: Work, attempt: int, db: str) -> str | None:
    """The action, the route and the move in one transaction; a failure spends the attempt."""
    model, step = rows.model, work.step
    workflow: CompiledWorkflow = model.workflow
    try:
        with transaction.atomic(using=db):
            record = rows.select_for_update().first()
            if record is None:
                retrying.forget(model, pk, work, db)
                return None
            entered = getattr(record, STATE_ENTERED_AT)
            with collecting(record):
                getattr(record, work.action)()
                target = choose_route(workflow.steps[step].routes, record, db)
                if target is None:
                    raise NoRouteMatched(record, work.action, step)
                saved = saved_by(record)
            retrying.forget(model, pk, work, db)
            guard = {workflow.state_attribute: step, STATE_ENTERED_AT: entered}
            event = Event(step, target, work.action, Trigger.AUTOMATIC, attempt=attempt)
            changes = {**saved, **entry_changes(workflow, target, timezone.now())}
            move(record, guard, changes, event)
        return target
    except ACTION_FAILURES as error:
        return _fail_attempt(rows, pk, work, attempt, error, db)


def _release(model: Any, pk: Any, work: Work, db: str) -> None:
    try:
        retrying.release(model, pk, work, db)
    except Exception:  # the heartbeat expires it in time all the same
        logger.exception("%s %s: could not release %s", model._meta.label, pk, work.name)


def _fail_attempt(
    rows: Any, pk: Any, work: Work, attempt: int, error: BaseException, db: str
) -> str | None:
    with transaction.atomic(using=db):
        record = rows.select_for_update().first()  # as stored, without the action's changes
        if record is None:
            retrying.forget(rows.model, pk, work, db)
            return None
        return attempt_failed(record, work, attempt, error, db)


def attempt_failed(
    record: Any, work: Work, attempt: int, error: BaseException, db: str, due: Any = None
) -> str | None:
    """Retry after the backoff, take ``on_error``, or halt, by what is left of the budget.

    ``due`` is the round of a deadline (its due instant); an automatic step's
    round is its entry. Every failed attempt, whatever follows, is one WARNING
    line. Returns the step taken on error, or ``None``.
    """
    model = type(record)
    declared = model.workflow.steps[work.step]
    round_key = due or getattr(record, STATE_ENTERED_AT)
    text = error_text(error)
    name = work.entity
    if attempt < work.retry.max_attempts:
        wait = retrying.backoff(work.retry, attempt)
        retry_at = timezone.now() + wait
        retrying.record_failure(model, record.pk, work, round_key, attempt, retry_at, text, db)
        deadlines.postpone(model, record.pk, work, retry_at, db)
        log_event(record, Event(work.step, work.step, name, Trigger.FAILED, None, error, attempt))
        _send_after_commit(work_failed, record, work, attempt, error, db, retry_at=retry_at)
        _log_failure(record, work, attempt, error, _next_attempt(model, work, wait, retry_at))
        return None
    on_error = declared.on_error if work.kind == WorkKind.STEP else None
    if on_error is None:
        retrying.record_failure(model, record.pk, work, round_key, attempt, None, text, db)
        deadlines.postpone(model, record.pk, work, deadlines.HALTED, db)
        log_event(record, Event(work.step, work.step, name, Trigger.HALTED, None, error, attempt))
        _send_after_commit(work_halted, record, work, attempt, error, db)
        _log_failure(record, work, attempt, error, "halted")
        return None
    retrying.forget(model, record.pk, work, db)
    guard = {model.workflow.state_attribute: work.step}
    event = Event(work.step, on_error, name, Trigger.ERROR_PATH, None, error, attempt)
    move(record, guard, entry_changes(model.workflow, on_error, timezone.now()), event)
    _log_failure(record, work, attempt, error, f"on_error: {on_error}")
    return on_error


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
    runs = _instant(retrying.runs_at(model.workflow, work, retry_at))
    backoff = f"{wait.total_seconds():g} s"
    if retrying.polled(work):
        return f"next attempt with the poll at {runs}, the first after the {backoff} backoff"
    return f"next attempt at {runs}, after the {backoff} backoff"


def _instant(at: Any) -> str:
    """In the worker's local time, like the log line's own stamp; the date only if not today."""
    local, today = timezone.localtime(at), timezone.localdate()
    return local.strftime("%H:%M:%S" if local.date() == today else "%Y-%m-%d %H:%M:%S")


def error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def error_summary(error: BaseException, limit: int = 300) -> str:
    """The exception's class and the first line of its message, for a log line."""
    lines = str(error).strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > limit:
        first = first[: limit - 1] + "…"
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


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


# Deadlines ------------------------------------------------------------------


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
            before = _values(record)
            with collecting(record):
                getattr(record, work.action)()
                _save_fired(record, work, now, before)
            log_event(record, Event(work.step, work.step, work.entity, Trigger.TIMEOUT))
            if attempt_row is not None:
                retrying.forget(model, pk, work, db)
        return True
    except ACTION_FAILURES as error:
        if record is None:
            raise
        attempt = (attempt_row.attempts if attempt_row else 0) + 1
        with transaction.atomic(using=db):
            attempt_failed(record, work, attempt, error, db, due=due)
        return False


def _save_fired(record: Any, work: Work, now: datetime, before: dict[str, Any]) -> None:
    """Save what the action set (through ``save()``) with the fired columns, in one UPDATE.

    A fired column whose anchor the action moved later stays clear: a new round began.
    When the action changed nothing, the model keeps Django's own ``save()`` and
    nobody listens to its save signals, only the workflow's columns are written,
    by one UPDATE of the locked row: nothing ``save()`` would add could be seen.
    """
    rearmed = set(rearming.moved_anchors(record))
    fired = [c for c in work.fired_together or (work.last_fired_field,) if c not in rearmed]
    written = {**dict.fromkeys(fired, now), **count_after_firing(work, record)}
    for column, value in written.items():
        setattr(record, column, value)
    model = type(record)
    if _values(record, before) == before and not _saves_visibly(model):
        if model.workflow.has_deadlines:
            written[NEXT_DUE_AT] = deadlines.next_due(record, now)
        statements.update_row(model, record.pk, written, database(record))
        apply(record, written)
        return
    setattr(record, GRANTED, list(written))
    changes = saved_by(record)
    db = database(record)
    write(model._base_manager.using(db).filter(pk=record.pk), changes, db)
    apply(record, changes)


def _values(record: Any, like: dict[str, Any] | None = None) -> dict[str, Any]:
    """The instance's own field values (all, or those in ``like``); mutable ones copied,
    so an action that changes a dict or a list in place shows as a change."""
    names = like.keys() if like is not None else _own_attnames(type(record))
    values = {name: record.__dict__.get(name) for name in names}
    return {
        name: copy.deepcopy(value) if isinstance(value, dict | list | set) else value
        for name, value in values.items()
    }


def _own_attnames(model: Any) -> list[str]:
    owned = model.workflow.owned_columns
    return [f.attname for f in model._meta.concrete_fields if f.attname not in owned]


def _saves_visibly(model: Any) -> bool:
    """Whether a ``save()`` could do more than write columns: an overridden ``save`` or
    receivers of its signals."""
    overridden = not getattr(model.save, "workflow_own", False)
    return overridden or pre_save.has_listeners(model) or post_save.has_listeners(model)


# Creation -------------------------------------------------------------------


def records_created(records: list[Any], using: str | None = None) -> None:
    """Log the entry into the initial step and queue it when it is automatic."""
    if not records:
        return
    db = using or database(records[0])
    model = type(records[0])
    if model.workflow.log is True:
        rows = [_log_row(model, r.pk, _initial(r), db) for r in records]
        TransitionLog.objects.using(db).bulk_create(rows)
    entries: dict[str, list[Any]] = {}
    for record in records:
        step = getattr(record, model.workflow.state_attribute)
        entries.setdefault(step, []).append((record.pk, getattr(record, STATE_ENTERED_AT)))
    for step, entered in entries.items():
        owed_effects.owe(model, step, entered, db)
    for record in records:
        _announce(model, record.pk, record, _initial(record), db)


def _initial(record: Any) -> Event:
    return Event("", record.current_step, "", Trigger.INITIAL)


# Routes ---------------------------------------------------------------------


def choose_route(routes: Iterable[Any], record: Any, db: str) -> str | None:
    """The ``to`` of the first route whose ``when`` holds for ``record``."""
    for route in routes:
        if _holds(route.when, record, db):
            return route.to
    return None


def _holds(when: Any, record: Any, db: str) -> bool:
    if when is None:
        return True
    if isinstance(when, Q):
        return holds(when, record, db)
    return bool(when(record))


def _fields_read(routes: Iterable[Any], model: Any) -> set[str]:
    """Column attribute names the ``Q`` routes read, for the stale guard."""
    by_name = {}
    for field in model._meta.concrete_fields:
        by_name[field.name] = by_name[field.attname] = field.attname
    calculations = model.workflow.calculations
    names: set[str] = set()
    for route in routes:
        if isinstance(route.when, Q):
            roots = lookup_roots(route.when)
            for name in roots & calculations.keys():  # a calculation: the fields it reads
                roots |= referenced(calculations[name])
            names |= {by_name[n] for n in roots if n in by_name}
    return names


def _with_values(record: Any, values: dict[str, Any]) -> Any:
    """The record as it would be with the accepted values applied."""
    if not values:
        return record
    seen = copy.copy(record)
    for name, value in values.items():
        setattr(seen, name, value)
    return seen


# Logging and announcing -----------------------------------------------------


def database(record: Any) -> str:
    return record._state.db or router.db_for_write(type(record), instance=record)


def log_event(record: Any, event: Event) -> None:
    """Write a log row, when the workflow logs."""
    if type(record).workflow.log is True:
        if event.from_state and event.from_state_entered_at is None:  # in place: not moved
            event = replace(event, from_state_entered_at=getattr(record, STATE_ENTERED_AT))
        db = database(record)
        statements.insert_log(_log_row(type(record), record.pk, event, db), db)


def _after_change(record: Any, event: Event, db: str) -> None:
    """Write the log row and owe the step's effect; after commit, send the signal and
    queue what follows."""
    log_event(record, event)
    owed_effects.owe(
        type(record), event.to_state, [(record.pk, getattr(record, STATE_ENTERED_AT))], db
    )
    _announce(type(record), record.pk, record, event, db)


def _announce(model: Any, pk: Any, instance: Any, event: Event, db: str) -> None:
    if instance is not None and step_changed.has_listeners(model):
        signal = partial(
            step_changed.send,
            sender=model,
            instance=instance,
            from_state=event.from_state or None,
            to_state=event.to_state,
            transition=event.name or None,
            trigger=event.trigger,
            actor=event.actor,
        )
        transaction.on_commit(signal, using=db)
    step = model.workflow.steps.get(event.to_state)
    if step is not None and (step.is_automatic or step.on_enter is not None):
        # work follows the entry: the transport queues it
        follow_up = partial(entered_step.send, sender=model, pk=pk, step=event.to_state)
        transaction.on_commit(follow_up, using=db)


def _declared_comment(model: Any, event: Event) -> str:
    """``Transition(comment=...)``: a manual move's comment when nobody gave one."""
    if event.trigger != Trigger.MANUAL:
        return ""
    declared = model.workflow.transition(event.from_state, event.name)
    return getattr(declared, "comment", "") or ""


def _log_row(model: Any, pk: Any, event: Event, db: str) -> TransitionLog:
    actor, error = event.actor, event.error
    return TransitionLog(
        content_type=ContentType.objects.db_manager(db).get_for_model(model),
        object_id=str(pk),
        from_state=event.from_state,
        to_state=event.to_state,
        transition_name=event.name,
        triggered_by=event.trigger,
        actor=actor if isinstance(actor, get_user_model()) else None,
        actor_repr="" if actor is None else str(actor)[:255],
        attempt=event.attempt,
        error="" if error is None else error_text(error),
        reverses=event.reverses,
        comment=event.comment or _declared_comment(model, event),
        data=event.data,
        from_state_entered_at=event.from_state_entered_at,
    )
