"""Writing a step change: the guarded UPDATE, the log row, the instance, the signals."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import router, transaction
from django.db.models.signals import post_save, pre_save

from ..errors import StaleRecord
from ..model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from ..model.compiled import CompiledWorkflow
from ..model.triggers import Event
from ..models import TransitionLog, WorkflowVote
from ..reading import claims_read
from ..signals import entered_step, step_changed
from ..work import due_instants
from . import meters, owed_effects, rearming, sla_clocks, traces
from .log_rows import log_row, log_values
from .rescheduling import reschedule
from .routes import with_values
from .sql import writes


def move(record: Any, guard: dict[str, Any], changes: dict[str, Any], event: Event) -> Any:
    """Write ``changes`` only if the row still holds ``guard``; log and announce.

    The instance holds the new values before anything is announced, so
    ``step_changed`` receivers see it in its new step.
    """
    db = database(record)
    model = type(record)
    changes = claims_read.leaving(model.workflow, event.from_state, changes)
    guard, changes = sla_clocks.leaving_one(record, guard, changes, event)
    if model.workflow.state_attribute in changes and model.workflow.has_deadlines:
        changes = {**changes, NEXT_DUE_AT: due_instants.entering(record, changes)}
    with transaction.atomic(using=db):
        entered = getattr(record, STATE_ENTERED_AT)
        if event.from_state_entered_at != entered:
            event = replace(event, from_state_entered_at=entered)
        if _writes_plainly(model, guard, changes):
            _write_logged(record, guard, changes, event, db)
            _end_stay(record, changes, db)
            _owe_and_announce(record, event, db)
            return record
        rows = model._base_manager.using(db).filter(pk=record.pk, **guard)
        if not write(rows, changes, db, record):
            raise StaleRecord(record, tuple(guard))
        apply(record, changes)
        _end_stay(record, changes, db)
        _after_change(record, event, db)
    return record


def move_locked(
    record: Any, changes: dict[str, Any], event: Event, along: writes.Along | None = None
) -> Any:
    """``move`` for a row the caller's transaction holds locked, read in ``event.from_state``
    entered at ``event.from_state_entered_at``: the compiled UPDATE and log INSERT in one
    round trip, no savepoint. ``move`` itself where a move is not that plain (save signals,
    log receivers, a column on another table). ``along`` is written with the move, before
    anything reacts to it (``writes.update_logged``)."""
    model = type(record)
    guard = {
        model.workflow.state_attribute: event.from_state,
        STATE_ENTERED_AT: event.from_state_entered_at,
    }
    db = database(record)
    if not _writes_plainly(model, guard, changes):
        writes.run(along, db)
        return move(record, guard, changes, event)
    changes = claims_read.leaving(model.workflow, event.from_state, changes)
    changes = sla_clocks.leaving(record, event.from_state, event.from_state_entered_at, changes)
    if model.workflow.state_attribute in changes and model.workflow.has_deadlines:
        changes = {**changes, NEXT_DUE_AT: due_instants.entering(record, changes)}
    answers = _write_logged(record, guard, changes, event, db, along, locked=True)
    _end_stay(record, changes, db)
    _owe_and_announce(record, event, db, answers)
    return record


def _writes_plainly(model: Any, guard: dict[str, Any], changes: dict[str, Any]) -> bool:
    """Whether a move is one guarded ``UPDATE`` and one log ``INSERT`` with nothing in
    between: no save signals, nobody listening to the log's, plain values on one table."""
    return (
        not _save_signals(model)
        and writes.logs_quietly()
        and writes.fits(model, changes)
        and writes.fits(model, guard)
    )


def _write_logged(
    record: Any,
    guard: dict[str, Any],
    changes: dict[str, Any],
    event: Event,
    db: str,
    along: writes.Along | None = None,
    locked: bool = False,
) -> Answers:
    """The guarded ``UPDATE`` and the log row, one statement where the database allows
    (the log row is rolled back with the rest when the guard no longer holds). For a row
    the transaction already holds ``locked``, asks the ``ASKED_ON_ENTRY`` questions in it;
    their answers, by the function that asked. (An ``UPDATE`` that waits for the row's
    lock reads other rows as they were before it waited: its answers could be stale.)"""
    model = type(record)
    log = None
    if model.workflow.log is True:
        log = log_values(model, record.pk, _entered_before(record, event, changes), db)
    asking = ASKED_ON_ENTRY if locked else ()
    asked = {ask: q for ask in asking if (q := ask(model, event.to_state, db))}
    questions = asked.values()
    if writes.update_logged(model, record.pk, changes, db, guard, log, along, questions) == 0:
        raise StaleRecord(record, tuple(guard))
    meters.moved(model, event, db)
    apply(record, changes)
    return {ask: question.answer for ask, question in asked.items()}


def _entered_before(record: Any, event: Event, changes: dict[str, Any]) -> Event:
    """``log_event``'s reading of the stay the event ends, before the instance is moved."""
    if event.from_state and event.from_state_entered_at is None:
        entered = changes.get(STATE_ENTERED_AT, getattr(record, STATE_ENTERED_AT))
        return replace(event, from_state_entered_at=entered)
    return event


#: What save-signal receivers read off an instance besides its fields: django-simple-
#: history's user, date, change reason and opt-out. Carried from the caller's record.
INSTANCE_NOTES = ("_history_user", "_history_date", "_change_reason", "skip_history_when_saving")


def write(rows: Any, changes: dict[str, Any], db: str, record: Any = None) -> int:
    """``UPDATE`` the row ``rows`` selects with ``changes``, between one ``pre_save`` and
    one ``post_save`` naming every column written (unless ``Workflow.save_signals`` is off).

    Both signals carry an instance holding exactly the written row: the stored row
    with ``changes`` applied, never the caller's instance and its unsaved edits, but
    with the caller's ``INSTANCE_NOTES`` (``record``: the caller's instance).
    """
    model = rows.model
    if not _save_signals(model):
        return rows.update(**changes)
    written = rows.first()
    if written is None:
        return 0
    for name, value in changes.items():
        setattr(written, name, value)
    for note in INSTANCE_NOTES:
        if record is not None and hasattr(record, note):
            setattr(written, note, getattr(record, note))
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


def prepared(record: Any, names: Iterable[str]) -> dict[str, Any]:
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
    changes = claims_read.leaving(model.workflow, event.from_state, changes)
    step = changes.get(model.workflow.state_attribute)
    per_record = False
    if step is not None and model.workflow.has_deadlines:
        same, due = due_instants.common_entry_due(model, step, changes[STATE_ENTERED_AT])
        changes = {**changes, NEXT_DUE_AT: due} if same else changes
        per_record = not same
    # The claim's rows are locked (or, on SQLite, the transaction writes alone): the
    # entry instants read here are still theirs when the UPDATE writes.
    entered, clocks_of, changes = sla_clocks.leaving_many(model, claim, changes, event)
    pks = list(entered)
    if not pks:
        return pks
    signals = _save_signals(model)
    if signals:
        for instance in model._base_manager.using(db).in_bulk(pks).values():
            seen = {**changes, **clocks_of.get(instance.pk, {})}
            _pre_save(model, with_values(instance, seen), changes, db)
    model._base_manager.using(db).filter(pk__in=pks).update(**changes)
    if model.workflow.has_votes and step is not None:
        discard_votes(pks, model, db)
    if per_record:  # deadlines counted from the record's own fields, zone or calendar
        reschedule(model, pks, db)
    if signals:
        written = {**changes, NEXT_DUE_AT: None} if per_record else changes
        for instance in model._base_manager.using(db).in_bulk(pks).values():
            _post_save(model, instance, written, db)
    if model.workflow.log is True:
        rows = [
            log_row(model, pk, replace(event, from_state_entered_at=entered[pk]), db) for pk in pks
        ]
        TransitionLog.objects.using(db).bulk_create(rows, batch_size=500)
    meters.moved(model, event, db, len(pks))
    owed_effects.owe(model, step, [(pk, changes[STATE_ENTERED_AT]) for pk in pks], db)
    instances = {}
    if step_changed.has_listeners(model):
        instances = model._base_manager.using(db).in_bulk(pks)
    for pk in pks:
        announce(model, pk, instances.get(pk), event, db)
    _moved(model, pks, db, step)
    return pks


def _end_stay(record: Any, changes: dict[str, Any], db: str) -> None:
    """A step change ends a stay: the votes cast in it go."""
    model = type(record)
    if model.workflow.has_votes and model.workflow.state_attribute in changes:
        discard_votes([record.pk], model, db)


def discard_votes(pks: list[Any], model: Any, db: str) -> None:
    """A step change ends the stay its votes belong to (``quorum`` transitions)."""
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    keys = [str(pk) for pk in pks]
    WorkflowVote.objects.using(db).filter(content_type=content_type, object_id__in=keys).delete()


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


def field_values(record: Any, like: dict[str, Any] | None = None) -> dict[str, Any]:
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


def saves_visibly(model: Any) -> bool:
    """Whether a ``save()`` could do more than write columns: an overridden ``save`` or
    receivers of its signals."""
    overridden = not getattr(model.save, "workflow_own", False)
    return overridden or pre_save.has_listeners(model) or post_save.has_listeners(model)


def database(record: Any) -> str:
    return record._state.db or router.db_for_write(type(record), instance=record)


def log_event(record: Any, event: Event) -> None:
    """Write a log row, when the workflow logs."""
    meters.moved(type(record), event, database(record))
    if type(record).workflow.log is True:
        if event.from_state and event.from_state_entered_at is None:  # in place: not moved
            event = replace(event, from_state_entered_at=getattr(record, STATE_ENTERED_AT))
        db = database(record)
        writes.insert_log(log_values(type(record), record.pk, event, db), db)


def _after_change(record: Any, event: Event, db: str) -> None:
    """Write the log row and owe the step's effect; after commit, send the signal and
    queue what follows."""
    log_event(record, event)
    _owe_and_announce(record, event, db)


#: What else a step change sets off in its transaction, ``(model, pks, db, step, instance,
#: answers)``: ``joins`` and ``buffering`` add theirs when the engine loads (they move
#: records through here).
AFTER_MOVES: list[Callable[..., None]] = []

#: What those hooks want to know of a record entering a step, ``(model, step, db) ->
#: writes.Question | None``: a single record's step change asks it in its own
#: statement, and the hooks find the answer in ``answers`` under the function that asked
#: (on PostgreSQL; elsewhere, and for other moves, ``answers`` has none).
ASKED_ON_ENTRY: list[Callable[..., writes.Question | None]] = []

#: A step change's answers to ``ASKED_ON_ENTRY``'s questions, by the function that asked.
Answers = dict[Callable[..., Any], Any]


def _moved(
    model: Any,
    pks: list[Any],
    db: str,
    step: str | None,
    instance: Any = None,
    answers: Answers | None = None,
) -> None:
    for hook in AFTER_MOVES:
        hook(model, pks, db, step, instance, answers or {})


def _owe_and_announce(record: Any, event: Event, db: str, answers: Answers | None = None) -> None:
    owed_effects.owe(
        type(record), event.to_state, [(record.pk, getattr(record, STATE_ENTERED_AT))], db
    )
    announce(type(record), record.pk, record, event, db)
    _moved(type(record), [record.pk], db, event.to_state, record, answers)


def announce(model: Any, pk: Any, instance: Any, event: Event, db: str) -> None:
    span = traces.moved(model, pk, event, db)
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
        transaction.on_commit(traces.within(span, follow_up), using=db)
