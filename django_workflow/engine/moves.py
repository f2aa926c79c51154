"""Writing a step change, the one pipeline every move takes: what the move derives
(``_derived``), one write (the compiled ``UPDATE`` with its log row, or the ORM's with
the save signals), and what follows the write in its transaction (``follow``).

``move`` and ``move_locked`` move one record, ``move_many`` the rows a claim holds;
creation follows its ``INSERT`` (``saving.records_created``), and a firing that keeps
its record in place writes its columns through ``write_columns``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import connections, router, transaction

from ..errors import StaleRecord
from ..model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from ..model.compiled import CompiledWorkflow
from ..model.triggers import Event
from ..model.versions import workflow_of
from ..models import WorkflowVote
from ..process import meters, traces
from ..reading import claims_read
from ..signals import entered_step, step_changed
from ..work import due_instants, rearming
from . import log_rows, owed_effects, save_signals, sla_clocks
from .log_rows import log_values
from .rescheduling import reschedule
from .routes import with_values
from .sql import writes


def move(record: Any, guard: dict[str, Any], changes: dict[str, Any], event: Event) -> Any:
    """Write ``changes`` only if the row still holds ``guard``; log and announce.

    The instance holds the new values before anything is announced, so
    ``step_changed`` receivers see it in its new step.
    """
    db = database(record)
    guard, changes = sla_clocks.leaving_one(record, guard, changes, event)
    changes = _derived(record, event, changes)
    entered = getattr(record, STATE_ENTERED_AT)
    if event.from_state_entered_at != entered:
        event = replace(event, from_state_entered_at=entered)
    if _alone(record, guard, changes, event, db):
        _write_one(record, guard, changes, event, db, locked=False, alone=True)
        return record
    with transaction.atomic(using=db):
        _write_one(record, guard, changes, event, db, locked=False)
    return record


def _alone(
    record: Any, guard: dict[str, Any], changes: dict[str, Any], event: Event, db: str
) -> bool:
    """Whether the move is one statement needing no transaction around it: on PostgreSQL,
    outside any transaction, the compiled ``UPDATE`` with its log row, and nothing that
    ``follow`` writes after it (votes, an owed effect, a hook acting on the step entered)."""
    connection, model = connections[db], type(record)
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return False
    step = event.to_state if model.workflow.state_attribute in changes else None
    declared = workflow_of(record).steps.get(step) if step else None
    follow_writes = step is not None and (
        model.workflow.has_votes
        or declared is None
        or declared.on_enter is not None
        or any(acts(model, step) for acts in ACTING_AFTER)
    )
    return not follow_writes and _compiled(model, guard, changes)


def move_locked(
    record: Any, changes: dict[str, Any], event: Event, along: writes.Along | None = None
) -> Any:
    """``move`` for a row the caller's transaction holds locked, read in ``event.from_state``
    entered at ``event.from_state_entered_at``: no savepoint, and the hooks' questions asked
    in the move's own statement. ``along`` is written with the move, before anything
    reacts to it (``writes.update_logged``)."""
    model = type(record)
    guard = {
        model.workflow.state_attribute: event.from_state,
        STATE_ENTERED_AT: event.from_state_entered_at,
    }
    if not _compiled(model, guard, changes):
        writes.run(along, database(record))
        return move(record, guard, changes, event)
    changes = sla_clocks.leaving(record, event.from_state, event.from_state_entered_at, changes)
    changes = _derived(record, event, changes)
    _write_one(record, guard, changes, event, database(record), locked=True, along=along)
    return record


def _derived(record: Any, event: Event, changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` with what the move derives: the holder let go, the due instant."""
    workflow = workflow_of(record)
    changes = claims_read.leaving(workflow, event.from_state, changes)
    if workflow.state_attribute in changes and workflow.has_deadlines:
        changes = {**changes, NEXT_DUE_AT: due_instants.entering(record, changes)}
    return changes


def _write_one(
    record: Any,
    guard: dict[str, Any],
    changes: dict[str, Any],
    event: Event,
    db: str,
    locked: bool,
    along: writes.Along | None = None,
    alone: bool = False,
) -> None:
    """One record's write, the way its model writes (``_compiled``), and what follows;
    ``alone``: the write is its own transaction (``_alone``).

    For a row the transaction already holds ``locked``, the hooks' questions are asked in
    the write's own statement. (An ``UPDATE`` that waits for the row's lock reads other
    rows as they were before it waited: its answers could be stale.)"""
    model = type(record)
    step = event.to_state if model.workflow.state_attribute in changes else None
    one = [(record.pk, event)]
    moved = Moved(model, db, step, one, {record.pk: record}, record, workflow=workflow_of(record))
    if not _compiled(model, guard, changes):
        rows = model._base_manager.using(db).filter(pk=record.pk, **guard)
        if not write(rows, changes, db, record):
            raise StaleRecord(record, tuple(guard))
        apply(record, changes)
        follow(moved, logged=False)
        return
    asking = ASKED_ON_ENTRY if locked else ()
    asked = {ask: q for ask in asking if (q := ask(model, event.to_state, db))}
    if not write_columns(record, changes, db, guard, event, along, asked.values(), alone):
        raise StaleRecord(record, tuple(guard))
    moved.answers = {ask: question.answer for ask, question in asked.items()}
    follow(moved, logged=True)


def _compiled(model: Any, guard: dict[str, Any], changes: dict[str, Any]) -> bool:
    """Whether a write is the compiled ``UPDATE`` with its log row in one statement: no
    save signals, nobody listening to the log's, plain values on one table. Otherwise the
    ORM writes it (``write``) and the log row follows (``log_rows.write``)."""
    return (
        not save_signals.sent_by(model)
        and writes.logs_quietly()
        and writes.fits(model, changes)
        and writes.fits(model, guard)
    )


def write_columns(
    record: Any,
    changes: dict[str, Any],
    db: str,
    guard: dict[str, Any] | None = None,
    event: Event | None = None,
    along: writes.Along | None = None,
    questions: Any = (),
    alone: bool = False,
) -> int:
    """The compiled ``UPDATE`` of ``record``'s row (if it still holds ``guard``) and the
    log row of ``event`` in one statement where the database allows; the values onto the
    instance. Returns how many rows were written. For values ``writes.fits``, nobody
    listening to save signals (the caller asks ``_compiled``)."""
    model = type(record)
    log = None
    if event is not None and model.workflow.log is True:
        log = log_values(model, record.pk, _entered_before(record, event, changes), db)
    written = writes.update_logged(
        model, record.pk, changes, db, guard, log, along, questions, alone
    )
    if written:
        if event is not None:
            meters.moved(model, event, db)
        apply(record, changes)
    return written


def _entered_before(record: Any, event: Event, changes: dict[str, Any] | None = None) -> Event:
    """``event`` naming the start of the stay it ends, when it does not yet: the record's
    entry as the instance holds it before ``changes`` are applied (or as they write it,
    for a write in place that sets it)."""
    if event.from_state and event.from_state_entered_at is None:
        entered = (changes or {}).get(STATE_ENTERED_AT, getattr(record, STATE_ENTERED_AT))
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
    if not save_signals.sent_by(model):
        return rows.update(**changes)
    written = rows.first()
    if written is None:
        return 0
    for name, value in changes.items():
        setattr(written, name, value)
    for note in INSTANCE_NOTES:
        if record is not None and hasattr(record, note):
            setattr(written, note, getattr(record, note))
    save_signals.pre(model, written, changes, db)
    count = rows.update(**changes)
    if count:
        save_signals.post(model, written, changes, db)
    return count


def move_many(
    model: Any, claim: Any, changes: dict[str, Any], event: Event, db: str, workflow: Any = None
) -> list[Any]:
    """Write ``changes`` to every row ``claim`` selects; log and announce each; return the keys.

    Runs inside the caller's transaction, which holds the claim's row locks; ``workflow``
    is the rows' version of the declaration (default: the current one)."""
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
    signals = save_signals.sent_by(model)
    if signals:
        for instance in model._base_manager.using(db).in_bulk(pks).values():
            seen = {**changes, **clocks_of.get(instance.pk, {})}
            save_signals.pre(model, with_values(instance, seen), changes, db)
    model._base_manager.using(db).filter(pk__in=pks).update(**changes)
    if per_record:  # deadlines counted from the record's own fields, zone or calendar
        reschedule(model, pks, db)
    if signals:
        written = {**changes, NEXT_DUE_AT: None} if per_record else changes
        for instance in model._base_manager.using(db).in_bulk(pks).values():
            save_signals.post(model, instance, written, db)
    events = [(pk, replace(event, from_state_entered_at=entered[pk])) for pk in pks]
    entered_at = changes.get(STATE_ENTERED_AT)
    follow(Moved(model, db, step, events, entered_at=entered_at, workflow=workflow), logged=False)
    return pks


@dataclass
class Moved:
    """What one write moved into ``step`` (``None``: a write in place), by ``(pk, event)``,
    for what follows it in its transaction: the instances at hand by key (the others are
    read when ``step_changed`` has receivers), the caller's own record when one moved,
    when they entered (else each instance's own entry), whether the move ended a stay
    (creation begins the first), and the hooks' answers asked in the write's statement."""

    model: Any
    db: str
    step: str | None
    events: list[tuple[Any, Event]]
    instances: dict[Any, Any] = field(default_factory=dict)
    caller: Any = None
    entered_at: Any = None
    ends_stay: bool = True
    answers: Answers = field(default_factory=dict)
    #: The version of the declaration the records run on (``None``: the model's current).
    workflow: Any = None


def follow(moved: Moved, logged: bool) -> None:
    """What follows every move's write in its transaction: the log rows (unless the write
    ``logged`` them), the stay's votes discarded, the entry's effects owed, and, after
    commit, ``step_changed`` and the queued work; then the hooks (``AFTER_MOVES``)."""
    model, db, step = moved.model, moved.db, moved.step
    if not logged:
        log_rows.write(model, moved.events, db)
    pks = [pk for pk, _ in moved.events]
    if step is None:
        return
    if moved.ends_stay and model.workflow.has_votes:
        discard_votes(pks, model, db)
    declared = moved.workflow or model.workflow
    owed_effects.owe(model, step, [(pk, _entered_at(moved, pk)) for pk in pks], db, declared)
    instances = moved.instances
    if not instances and step_changed.has_listeners(model):
        instances = model._base_manager.using(db).in_bulk(pks)
    for pk, event in moved.events:
        announce(model, pk, instances.get(pk), event, db, declared)
    for hook in AFTER_MOVES:
        hook(model, pks, db, step, moved.caller, moved.answers)


def _entered_at(moved: Moved, pk: Any) -> Any:
    """When ``pk`` entered the step it moved into."""
    if moved.entered_at is not None:
        return moved.entered_at
    return getattr(moved.instances[pk], STATE_ENTERED_AT)


def discard_votes(pks: list[Any], model: Any, db: str) -> None:
    """A step change ends the stay its votes belong to (``quorum`` transitions)."""
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    keys = [str(pk) for pk in pks]
    WorkflowVote.objects.using(db).filter(content_type=content_type, object_id__in=keys).delete()


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


def database(record: Any) -> str:
    return record._state.db or router.db_for_write(type(record), instance=record)


def log_event(record: Any, event: Event) -> None:
    """Log an event that leaves the record where it is (a vote, a failed attempt)."""
    log_rows.write(type(record), [(record.pk, _entered_before(record, event))], database(record))


#: What else a step change sets off in its transaction, ``(model, pks, db, step, instance,
#: answers)``: ``joins`` and ``buffering`` add theirs when the engine loads (they move
#: records through here).
AFTER_MOVES: list[Callable[..., None]] = []

#: Whether one of those hooks acts on a record of ``model`` entering ``step``, ``(model,
#: step) -> bool``, registered beside it: a move none acts on needs no transaction of its
#: own (``_alone``).
ACTING_AFTER: list[Callable[[Any, str], bool]] = []

#: What those hooks want to know of a record entering a step, ``(model, step, db) ->
#: writes.Question | None``: a single record's step change asks it in its own
#: statement, and the hooks find the answer in ``answers`` under the function that asked
#: (on PostgreSQL; elsewhere, and for other moves, ``answers`` has none).
ASKED_ON_ENTRY: list[Callable[..., writes.Question | None]] = []

#: A step change's answers to ``ASKED_ON_ENTRY``'s questions, by the function that asked.
Answers = dict[Callable[..., Any], Any]


def announce(model: Any, pk: Any, instance: Any, event: Event, db: str, workflow: Any) -> None:
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
    step = workflow.steps.get(event.to_state)
    if step is not None and (step.is_automatic or step.on_enter is not None):
        # work follows the entry: the transport queues it
        follow_up = partial(entered_step.send, sender=model, pk=pk, step=event.to_state)
        transaction.on_commit(traces.within(span, follow_up), using=db)
