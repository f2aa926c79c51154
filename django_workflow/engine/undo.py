"""Undo and redo: rewind the newest step change of an ``undoable=True`` transition.

Undo restores the step only (not attributes), sets ``state_entered_at`` to
now and writes an ``undo`` log row whose ``reverses`` points at the row it
undoes. Undoing an undo is redo. Refusals raise ``UndoNotPermitted`` with a
``reason``; nothing changes. The same rules hold for undo and redo: both are
possible within ``Undo(within=...)`` of the manual move the chain began with,
and neither once the worker has started on the step the move entered (its
``on_enter``, its action, a deadline of it): that effect has gone out. Nor is a
transition with a ``cascade`` undone: its children moved with it, and rewinding the
record alone would leave them moved.

The engine is imported where an undo runs, not on import: the admin asks
``undoable`` while Django loads it, and ``manage.py check`` loads no runtime.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..declaration import Undo
from ..durations import parse_timedelta
from ..errors import StaleRecord, UndoNotPermitted, WorkflowPermissionDenied
from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from ..reading import attempts_read
from ..reading.log_rows_read import history, last_step_change


def undoable_row(record: Any, actor: Any = None) -> Any:
    """The log row an undo by ``actor`` would reverse; ``UndoNotPermitted`` says why not."""
    workflow = workflow_of(record)
    undo = workflow.undo
    if not isinstance(undo, Undo) or workflow.log is not True:
        raise UndoNotPermitted("undo_not_enabled", "This workflow has no undo (Workflow.undo).")
    row = last_step_change(record)
    if row is None:
        raise UndoNotPermitted("no_history", "Nothing has moved this record yet.")
    if row.triggered_by != Trigger.UNDO:
        transition = workflow.transition(row.from_state, row.transition_name)
        if row.triggered_by != Trigger.MANUAL or transition is None or not transition.undoable:
            raise UndoNotPermitted(
                "not_undoable", f"The last step change ({row.transition_name!r}) is not undoable."
            )
        if transition.cascade:  # rewinding the record alone would leave its children moved
            raise UndoNotPermitted(
                "cascaded",
                f"The last step change ({row.transition_name!r}) moved related records with it "
                f"(cascade over {', '.join(transition.cascade)}); undo would not move them back.",
            )
        if _completed_a_join(record, row):  # its parent moved on: undo would strand it
            raise UndoNotPermitted(
                "joined",
                f"The last step change ({row.transition_name!r}) completed its parent's join, "
                "and the parent moved on; undo would not move it back.",
            )
    made = _first_move(row).occurred_at
    if undo.within is not None and timezone.now() - made > parse_timedelta(undo.within):
        raise UndoNotPermitted(
            "window_expired", f"Undo is only possible within {undo.within} of the move."
        )
    if _work_started(record, row):
        raise UndoNotPermitted(
            "effect_ran",
            f"The work of step {row.to_state!r}, the one the move entered, has already started.",
        )
    if undo.same_actor:
        if actor is None:
            raise UndoNotPermitted("no_actor", "Only the actor who made the change may undo it.")
        if not _same_actor(row, actor):
            raise UndoNotPermitted(
                "different_actor", "Only the actor who made the change may undo it."
            )
    if undo.policy is not None and not undo.policy(actor, record, "undo"):
        raise WorkflowPermissionDenied(record, "undo", actor)
    return row


def _completed_a_join(record: Any, row: Any) -> bool:
    """Whether a parent's ``join`` log row names ``record`` as the child whose move, the
    one ``row`` logged, completed it."""
    from django.contrib.contenttypes.models import ContentType
    from django.db.models import Q

    from ..models import TransitionLog
    from .joins import parents_of

    parents = parents_of(record)
    if not parents:  # most records: no join waits on them, and no query
        return False
    db = row._state.db
    types = ContentType.objects.db_manager(db)
    of_a_parent = Q()
    for model, pk in parents:  # the parent's own rows: its index, not the whole log
        of_a_parent |= Q(content_type=types.get_for_model(model), object_id=str(pk))
    joins = TransitionLog.objects.using(db).filter(
        of_a_parent,
        triggered_by=Trigger.JOIN,
        data__child=f"{record._meta.label} {record.pk}",
        occurred_at__gte=row.occurred_at,
    )
    return joins.exists()


def _first_move(row: Any) -> Any:
    """The manual move an undo/redo chain began with: its window counts from there, so a
    redo never reopens a decision the window has closed."""
    while row.triggered_by == Trigger.UNDO and row.reverses_id is not None:
        row = row.reverses
    return row


def _work_started(record: Any, row: Any) -> bool:
    """Whether, since ``row`` moved the record, the worker ran or is running work of the
    step it entered: a log row after it (an ``on_enter`` effect, a deadline firing, a
    failed attempt) or an attempt of this stay (an automatic action under way). An
    ``every``'s firings are not: a reminder repeats while the record waits, and is not an
    effect the move owns."""
    later = Q(occurred_at__gt=row.occurred_at) | Q(occurred_at=row.occurred_at, id__gt=row.id)
    if history(record).filter(later).exclude(_every_firings(record, row.to_state)).exists():
        return True
    from . import database

    model, db = type(record), database(record)
    works = [work.name for work in workflow_of(record).works if work.step == row.to_state]
    entered = getattr(record, STATE_ENTERED_AT)
    attempts = attempts_read.rows(model, db).filter(object_id=str(record.pk), work__in=works)
    return attempts.filter(round_key__gte=entered).exists()


def _every_firings(record: Any, step: str) -> Q:
    """The log rows the everies of ``step`` write: same-step rows of a deadline, named
    after the every."""
    declared = workflow_of(record).steps.get(step)
    names = [every.name for every in declared.everies] if declared is not None else []
    same_step = Q(from_state=step, to_state=step, triggered_by=Trigger.TIMEOUT)
    return same_step & Q(transition_name__in=names) if names else Q(pk__in=[])


def _same_actor(row: Any, actor: Any) -> bool:
    if isinstance(actor, get_user_model()):
        return row.actor_id == actor.pk
    return row.actor_id is None and row.actor_repr == str(actor)[:255]


def run_undo(record: Any, actor: Any = None) -> Any:
    """Undo (or redo) the newest step change of ``record``.

    The record's row is locked first: a worker firing the entered step's work holds it
    until its log row commits, which the check then sees.
    """
    from . import database

    workflow = workflow_of(record)
    attribute = workflow.state_attribute
    step = getattr(record, attribute)
    with transaction.atomic(using=database(record)):
        rows = type(record)._base_manager.using(database(record)).select_for_update()
        if rows.values_list(attribute, flat=True).get(pk=record.pk) != step:
            raise StaleRecord(record, (attribute,))
        return _undo(record, undoable_row(record, actor), step, actor)


def _undo(record: Any, row: Any, step: str, actor: Any) -> Any:
    from .. import engine
    from . import owed_effects

    workflow = workflow_of(record)
    if step != row.to_state:  # moved outside the workflow since the log's last change
        raise UndoNotPermitted(
            "not_undoable", f"The record is in {step!r}, not where its last change left it."
        )
    # The effect of the entry undone has not started (or undo is refused): it is not owed.
    rows = type(record)._base_manager.using(engine.database(record)).filter(pk=record.pk)
    owed_effects.cancel(record, step, rows.values_list(STATE_ENTERED_AT, flat=True).get())
    changes = engine.entry_changes(workflow, row.from_state, timezone.now())
    event = Event(step, row.from_state, "undo", Trigger.UNDO, actor, reverses=row)
    return engine.move(record, {workflow.state_attribute: step}, changes, event)


def undoable(record: Any, actor: Any = None) -> Any:
    """The log row an undo by ``actor`` would reverse, or ``None`` when undo is refused."""
    try:
        return undoable_row(record, actor)
    except (UndoNotPermitted, WorkflowPermissionDenied):
        return None
