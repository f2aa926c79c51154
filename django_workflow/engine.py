"""The one path every step change takes: manual transitions, automatic steps, creation.

Each change is one database transaction: the new step is written only if the
row still holds what the caller saw, the log row is written beside it, and
the signal and any automatic step that follows run after commit.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import router, transaction
from django.db.models import Q
from django.utils import timezone

from . import rearming, retrying
from .compiled import STATE_ENTERED_AT, CompiledWorkflow
from .conf import workflow_settings
from .declaration import Route
from .durations import parse_timedelta
from .errors import NoRouteMatched, StaleRecord, TransitionNotAllowed, WorkflowPermissionDenied
from .evaluation import holds
from .signals import step_changed, work_failed, work_halted

logger = logging.getLogger("django_workflow")


@dataclass(frozen=True)
class Event:
    """One thing that happened to a record, as the log and the signal describe it."""

    from_state: str
    to_state: str
    name: str
    trigger: str
    actor: Any = None
    error: Exception | None = None
    attempt: int | None = None
    reverses: Any = None  # the log row an undo reverses


# Manual transitions ---------------------------------------------------------


def run_transition(
    record: Any, name: str, *, actor: Any = None, authorize: bool = True, **accepted: Any
) -> Any:
    """Move ``record`` through transition ``name`` of its current step."""
    model = type(record)
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
    if authorize:
        policy = workflow.policy_for(step, name)
        if policy is not None and not policy(actor, record, name):
            raise WorkflowPermissionDenied(record, name, actor)
    seen = _with_values(record, accepted)
    db = _database(record)
    target = choose_route(declared.routes or (Route(declared.to),), seen, db)
    if target is None:
        raise NoRouteMatched(record, name, step)
    guard = {workflow.state_attribute: step}
    for attname in _fields_read(declared.routes, model) - set(accepted):
        guard[attname] = getattr(record, attname)
    changes = {**entry_changes(workflow, target, timezone.now()), **accepted}
    return move_guarded(record, guard, changes, Event(step, target, name, "manual", actor))


def move_guarded(record: Any, guard: dict[str, Any], changes: dict[str, Any], event: Event) -> Any:
    """Write ``changes`` only if the row still holds ``guard``; log and announce; refresh."""
    db = _database(record)
    with transaction.atomic(using=db):
        rows = type(record)._base_manager.using(db).filter(pk=record.pk, **guard)
        if not rows.update(**changes):
            raise StaleRecord(record, tuple(guard))
        _after_change(record, event, db)
    _apply(record, changes)
    return record


# Automatic steps ------------------------------------------------------------


def run_automatic_step(model_label: str, pk: Any, step: str) -> str | None:
    """The django-q2 task for an automatic step; see ``run_step``."""
    return run_step(apps.get_model(model_label), pk, step)


def run_step(model: Any, pk: Any, step: str, *, now: Any = None) -> str | None:
    """Run automatic step ``step`` for the record ``pk`` if it is still there.

    The attempt is counted first, in a transaction of its own, so a worker
    killed mid-action (a time limit, a crash) still spends it. Then the
    action, the route it leads to and the new step commit together. An
    exception or a route miss rolls the action back; it is retried per the
    step's ``Retry``, and when the attempts run out the record takes
    ``on_error`` or stays where it is, halted. Returns the step the record
    moved to, or ``None`` when it did not move.
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
    claim = retrying.start_attempt(model, pk, work, entered, now, db, declared.time_limit)
    if claim is None:
        return None
    with transaction.atomic(using=db):
        record = rows.select_for_update().filter(**{STATE_ENTERED_AT: entered}).first()
        if record is None:
            return None
        if claim.exhausted:
            error = TimeoutError(f"attempt {claim.number} did not finish (time limit or crash)")
            return _attempt_failed(record, work, claim.number, error, db)
        try:
            with transaction.atomic(using=db):
                getattr(record, declared.action)()
                target = choose_route(declared.routes, record, db)
                if target is None:
                    raise NoRouteMatched(record, declared.action, step)
        except Exception as error:
            logger.exception("%s %s: action %r failed", model.__name__, pk, declared.action)
            return _attempt_failed(record, work, claim.number, error, db)
        _apply(record, entry_changes(workflow, target, timezone.now()))
        record.save()
        retrying.forget(model, pk, work, db)
        event = Event(step, target, declared.action, "automatic", attempt=claim.number)
        _after_change(record, event, db)
    return target


def _attempt_failed(record: Any, work: Any, attempt: int, error: Exception, db: str) -> str | None:
    """Retry later, take ``on_error`` or halt, by what is left of the budget."""
    model, step = type(record), work.step
    declared = model.workflow.steps[step]
    fresh = model._base_manager.using(db).get(pk=record.pk)  # without the action's changes
    entered = getattr(fresh, STATE_ENTERED_AT)
    if attempt < work.retry.max_attempts:
        retry_at = timezone.now() + retrying.backoff(work.retry, attempt)
        text = _error_text(error)
        retrying.record_failure(model, fresh.pk, work, entered, attempt, retry_at, text, db)
        log_event(fresh, Event(step, step, declared.action, "failed", None, error, attempt), db)
        send_after_commit(work_failed, model, fresh.pk, work, attempt, error, db, retry_at=retry_at)
        return None
    if declared.on_error is None:
        retrying.record_failure(
            model, fresh.pk, work, entered, attempt, None, _error_text(error), db
        )
        log_event(fresh, Event(step, step, declared.action, "halted", None, error, attempt), db)
        send_after_commit(work_halted, model, fresh.pk, work, attempt, error, db)
        return None
    retrying.forget(model, fresh.pk, work, db)
    changes = entry_changes(model.workflow, declared.on_error, timezone.now())
    model._base_manager.using(db).filter(pk=fresh.pk).update(**changes)
    _apply(fresh, changes)
    event = Event(step, declared.on_error, declared.action, "error_path", None, error, attempt)
    _after_change(fresh, event, db)
    return declared.on_error


def _error_text(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


def send_after_commit(
    signal: Any,
    model: Any,
    pk: Any,
    work: Any,
    attempt: int,
    error: Exception,
    db: str,
    **extra: Any,
) -> None:
    if signal.has_listeners(model):
        send = partial(
            signal.send, sender=model, pk=pk, work=work.name, attempt=attempt, error=error, **extra
        )
        transaction.on_commit(send, using=db)


def enqueue_step(model_label: str, pk: Any, step: str, queue: str) -> None:
    """Queue an automatic step on django-q2; the worker runs ``run_automatic_step``.

    A step's ``time_limit`` becomes the task's timeout: django-q2 kills a
    worker that runs past it, and the attempt counts as failed.
    """
    from django_q.tasks import async_task

    options = {"cluster": queue, **workflow_settings.TASK_OPTIONS}
    limit = apps.get_model(model_label).workflow.steps[step].time_limit
    if limit is not None:
        options["timeout"] = math.ceil(parse_timedelta(limit).total_seconds())
    async_task(
        "django_workflow.engine.run_automatic_step",
        model_label,
        pk,
        step,
        task_name=f"workflow:{model_label}:{step}:{pk}",
        q_options=options,
    )


# Creation -------------------------------------------------------------------


def records_created(records: list[Any], using: str | None = None) -> None:
    """Log the entry into the initial step and queue it when it is automatic."""
    if not records:
        return
    db = using or _database(records[0])
    workflow: CompiledWorkflow = type(records[0]).workflow
    if workflow.log is True:
        from .models import TransitionLog

        rows = [_log_row(type(r), r.pk, _initial(r), db) for r in records]
        TransitionLog.objects.using(db).bulk_create(rows)
    for record in records:
        _announce(type(record), record.pk, record, _initial(record), db)


def _initial(record: Any) -> Event:
    return Event("", record.current_step, "", "initial")


# Shared ---------------------------------------------------------------------


def entry_changes(workflow: CompiledWorkflow, step: str, now: Any) -> dict[str, Any]:
    """What entering ``step`` writes: the step, the entry instant, fresh action timeouts."""
    changes = {workflow.state_attribute: step, STATE_ENTERED_AT: now}
    changes.update(dict.fromkeys(workflow.fired_fields(step)))
    return changes


def _apply(record: Any, changes: dict[str, Any]) -> None:
    for name, value in changes.items():
        setattr(record, name, value)
    rearming.remember(record)


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
    names: set[str] = set()
    for route in routes:
        if isinstance(route.when, Q):
            names |= {by_name[n] for n in _lookup_roots(route.when) if n in by_name}
    return names


def _lookup_roots(condition: Q) -> set[str]:
    roots: set[str] = set()
    for child in condition.children:
        if isinstance(child, Q):
            roots |= _lookup_roots(child)
        elif isinstance(child, tuple):
            roots.add(child[0].split("__")[0])
    return roots


def _with_values(record: Any, values: dict[str, Any]) -> Any:
    if not values:
        return record
    seen = copy.copy(record)
    for name, value in values.items():
        setattr(seen, name, value)
    return seen


def _database(record: Any) -> str:
    return record._state.db or router.db_for_write(type(record), instance=record)


def log_event(record: Any, event: Event, db: str) -> None:
    """Write a log row (when the workflow logs) for an event that is not a step change."""
    if type(record).workflow.log is True:
        _log_row(type(record), record.pk, event, db).save(using=db)


def after_bulk_change(model: Any, pks: list[Any], event: Event, db: str) -> None:
    """``_after_change`` for many records moved by one UPDATE."""
    if not pks:
        return
    if model.workflow.log is True:
        from .models import TransitionLog

        rows = [_log_row(model, pk, event, db) for pk in pks]
        TransitionLog.objects.using(db).bulk_create(rows, batch_size=500)
    instances = {}
    if step_changed.has_listeners(model):
        instances = model._base_manager.using(db).in_bulk(pks)
    for pk in pks:
        _announce(model, pk, instances.get(pk), event, db)


def _after_change(record: Any, event: Event, db: str) -> None:
    """Write the log row; after commit, send the signal and queue an automatic step."""
    log_event(record, event, db)
    _announce(type(record), record.pk, record, event, db)


def _announce(model: Any, pk: Any, instance: Any, event: Event, db: str) -> None:
    workflow: CompiledWorkflow = model.workflow
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
    target = workflow.steps.get(event.to_state)
    if target is not None and target.is_automatic and workflow_settings.ENQUEUE_AUTOMATIC_STEPS:
        enqueue = partial(enqueue_step, model._meta.label, pk, event.to_state, workflow.queue)
        transaction.on_commit(enqueue, using=db)


def _log_row(model: Any, pk: Any, event: Event, db: str) -> Any:
    from django.contrib.contenttypes.models import ContentType

    from .models import TransitionLog

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
        error="" if error is None else _error_text(error),
        reverses=event.reverses,
    )
