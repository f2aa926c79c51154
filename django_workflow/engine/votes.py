"""Votes: ``Transition(..., quorum=N)`` moves a record once N distinct actors called it.

Owns the ``WorkflowVote`` rows: casting a vote (and, for the call that reaches
the quorum, handing over to the move in the same transaction), retracting one,
and reading a stay's votes. Every write locks the record's row first (``SELECT …
FOR UPDATE`` on PostgreSQL; on SQLite the write transaction is the lock), so
concurrent voters count one after another and exactly one of them moves the
record; the unique constraint on the votes backs the count.

A stay is named by the record's ``state_entered_at``, and its votes are
discarded in the transaction of every step change (``moves.discard_votes``, called by the
moves): leaving the step by any transition, a veto included, begins another
stay, whose count starts at zero. The log keeps every vote and retraction as a
row with trigger ``vote``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import IntegrityError, transaction

from ..errors import (
    LABELS,
    AlreadyVoted,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)
from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from ..models import WorkflowVote
from ..reading.votes_read import actor_key, quorum
from .moves import database, log_event

#: The log row's ``data`` of a retraction.
RETRACTED = {"retract": True}


def cast(record: Any, decision: Any, event: Event, move_on: Callable[[], Any]) -> Any:
    """Record ``event.actor``'s vote for the decided transition; the vote that reaches
    the quorum calls ``move_on`` (the move) in the same transaction, under the lock."""
    name, step, actor = decision.transition.name, decision.step, event.actor
    if actor is None:  # a vote counts a person: an anonymous call cannot be told apart
        raise WorkflowPermissionDenied(record, name, None)
    db = database(record)
    with transaction.atomic(using=db):
        stay = _locked_stay(record, decision.guard)
        _add(record, name, step, stay, actor)
        log_event(record, Event(step, step, name, Trigger.VOTE, actor, **_words(event)))
        if _stay_votes(record, name, stay).count() >= quorum(decision.transition):
            return move_on()
    return record


def retract(record: Any, name: str, actor: Any, comment: str = "") -> Any:
    """Withdraw ``actor``'s vote for ``name`` in the record's current stay (logged)."""
    workflow = workflow_of(record)
    step = getattr(record, workflow.state_attribute)
    if quorum(workflow.transition(step, name)) is None:
        raise TransitionNotAllowed(record, name, step)
    db = database(record)
    with transaction.atomic(using=db):
        stay = _locked_stay(record, {workflow.state_attribute: step})
        withdrawn, _ = _stay_votes(record, name, stay).filter(actor_key=actor_key(actor)).delete()
        if not withdrawn:
            raise TransitionNotAllowed(
                record,
                name,
                step,
                f"{actor} has no vote for transition {name!r} to retract.",
                f"{actor} has no vote for {LABELS.transition(record, name, step)} to retract.",
            )
        event = Event(step, step, name, Trigger.VOTE, actor, comment=comment, data=RETRACTED)
        log_event(record, event)
    return record


def voters(record: Any, name: str) -> list[Any]:
    """The actors who voted for ``name`` in the record's current stay, oldest vote first:
    users as user instances, other actors by their text."""
    rows = _stay_votes(record, name, getattr(record, STATE_ENTERED_AT)).select_related("actor")
    return [row.actor if row.actor_id is not None else row.actor_repr for row in rows]


def voted(record: Any, transition: Any, actor: Any) -> bool:
    """Whether ``actor`` already voted for ``transition`` in this stay (never, for a
    transition that is no vote or a call without an actor)."""
    if actor is None or quorum(transition) is None:
        return False
    stay = getattr(record, STATE_ENTERED_AT)
    return _stay_votes(record, transition.name, stay).filter(actor_key=actor_key(actor)).exists()


def _locked_stay(record: Any, guard: dict[str, Any]) -> Any:
    """Lock the record's row, still in the step and the stay the instance was loaded in;
    return the stay's entry instant. ``StaleRecord`` when it moved on meanwhile."""
    model, db = type(record), database(record)
    stay = getattr(record, STATE_ENTERED_AT)
    rows = model._base_manager.using(db).filter(pk=record.pk, **guard, **{STATE_ENTERED_AT: stay})
    if not rows.select_for_update().exists():
        raise StaleRecord(record, (*guard, STATE_ENTERED_AT))
    return stay


def _add(record: Any, name: str, step: str, stay: Any, actor: Any) -> None:
    """Store the vote; votes of the record's earlier stays, discarded when it left them,
    go now. ``AlreadyVoted`` when the actor's vote is in already."""
    db, key = database(record), actor_key(actor)
    mine = _stay_votes(record, name, stay).filter(actor_key=key)
    if mine.exists():
        raise AlreadyVoted(record, name, step, actor)
    _record_votes(record).exclude(entered_at=stay).delete()  # moved by a raw UPDATE
    try:
        with transaction.atomic(using=db):  # a savepoint: the error leaves the rest usable
            WorkflowVote.objects.using(db).create(
                content_type=_content_type(record),
                object_id=str(record.pk),
                transition=name,
                step=step,
                entered_at=stay,
                actor=actor if isinstance(actor, get_user_model()) else None,
                actor_key=key,
                actor_repr=str(actor)[:255],
            )
    except IntegrityError:  # the same actor's vote, committed by another connection
        raise AlreadyVoted(record, name, step, actor) from None


def _words(event: Event) -> dict[str, Any]:
    return {"comment": event.comment, "data": event.data}


def _record_votes(record: Any) -> Any:
    db = database(record)
    return WorkflowVote.objects.using(db).filter(
        content_type=_content_type(record), object_id=str(record.pk)
    )


def _stay_votes(record: Any, name: str, stay: Any) -> Any:
    return _record_votes(record).filter(transition=name, entered_at=stay)


def _content_type(record: Any) -> ContentType:
    return ContentType.objects.db_manager(database(record)).get_for_model(type(record))
