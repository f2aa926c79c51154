"""Undo and redo: rewind the newest step change of an ``undoable=True`` transition.

Undo restores the step only (not attributes), sets ``state_entered_at`` to
now and writes an ``undo`` log row whose ``reverses`` points at the row it
undoes. Undoing an undo is redo. Refusals raise ``UndoNotPermitted`` with a
``reason``; nothing changes.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from . import engine
from .declaration import Undo
from .durations import parse_timedelta
from .errors import StaleRecord, UndoNotPermitted, WorkflowPermissionDenied
from .events import Event, Trigger
from .history import last_step_change


def undoable_row(record: Any, actor: Any = None) -> Any:
    """The log row an undo by ``actor`` would reverse; ``UndoNotPermitted`` says why not."""
    workflow = type(record).workflow
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
    if undo.within is not None and timezone.now() - row.occurred_at > parse_timedelta(undo.within):
        raise UndoNotPermitted("window_expired", f"Undo is only possible within {undo.within}.")
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


def _same_actor(row: Any, actor: Any) -> bool:
    if isinstance(actor, get_user_model()):
        return row.actor_id == actor.pk
    return row.actor_id is None and row.actor_repr == str(actor)[:255]


def run_undo(record: Any, actor: Any = None) -> Any:
    """Undo (or redo) the newest step change of ``record``."""
    row = undoable_row(record, actor)
    workflow = type(record).workflow
    attribute = workflow.state_attribute
    step = getattr(record, attribute)
    stored = type(record)._base_manager.using(record._state.db).values_list(attribute, flat=True)
    if stored.get(pk=record.pk) != step:
        raise StaleRecord(record, (attribute,))
    if step != row.to_state:  # moved outside the workflow since the log's last change
        raise UndoNotPermitted(
            "not_undoable", f"The record is in {step!r}, not where its last change left it."
        )
    changes = engine.entry_changes(workflow, row.from_state, timezone.now())
    event = Event(step, row.from_state, "undo", Trigger.UNDO, actor, reverses=row)
    return engine.move(record, {workflow.state_attribute: step}, changes, event)


def undoable(record: Any, actor: Any = None) -> Any:
    """The log row an undo by ``actor`` would reverse, or ``None`` when undo is refused."""
    try:
        return undoable_row(record, actor)
    except (UndoNotPermitted, WorkflowPermissionDenied):
        return None
