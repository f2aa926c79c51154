"""Who a vote counts (``Transition(..., quorum=N)``): a transition's quorum, the key one
actor's votes are stored under, and the filter of the records on which an actor has not
voted in their current stay.

Read by ``engine.votes``, which casts and counts the votes, and by ``actionable``, which
leaves out of ``actionable_by`` what an actor may no longer vote for; imports only the
storage.
"""

from __future__ import annotations

from typing import Any

from django.db import router
from django.db.models import CharField, Exists, OuterRef, Q
from django.db.models.functions import Cast

from ..model.columns import STATE_ENTERED_AT


def quorum(transition: Any) -> int | None:
    """How many distinct actors ``transition`` needs; ``None`` when it is no vote (or
    its ``quorum`` is malformed, which the checks report)."""
    value = getattr(transition, "quorum", None)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def actor_key(actor: Any) -> str:
    """Who counts as one voter: a model instance (a user) by its model and key, any
    other actor by its text."""
    meta = getattr(actor, "_meta", None)
    if meta is not None and getattr(actor, "pk", None) is not None:
        return f"{meta.label_lower}:{actor.pk}"
    return str(actor)[:255]


def not_voted(model: Any, transition: Any, actor: Any) -> Q:
    """The records of ``model`` on which ``actor`` has no vote for ``transition`` in their
    current stay: all of them (an empty ``Q``) for a transition that is no vote or a call
    without an actor. A correlated ``NOT EXISTS``, served by the votes' unique index."""
    from ..models import (
        WorkflowVote,  # loaded with the apps; this module is read before
    )

    if actor is None or quorum(transition) is None:
        return Q()
    concrete = model._meta.concrete_model._meta  # votes name the concrete model
    votes = WorkflowVote.objects.filter(
        content_type__app_label=concrete.app_label,
        content_type__model=concrete.model_name,
        object_id=Cast(OuterRef("pk"), CharField()),
        transition=transition.name,
        entered_at=OuterRef(STATE_ENTERED_AT),
        actor_key=actor_key(actor),
    )
    return ~Q(Exists(votes))


def votes_cast(record: Any, transition: Any) -> int:
    """How many actors voted for ``transition`` in ``record``'s current stay."""
    from django.contrib.contenttypes.models import ContentType

    from ..models import WorkflowVote

    db = record._state.db or router.db_for_write(type(record), instance=record)
    concrete = type(record)._meta.concrete_model
    content_type = ContentType.objects.db_manager(db).get_for_model(concrete)
    votes = WorkflowVote.objects.using(db).filter(
        content_type=content_type,
        object_id=str(record.pk),
        transition=transition.name,
        entered_at=getattr(record, STATE_ENTERED_AT),
    )
    return votes.count()


def moves_with_one_more(record: Any, transition: Any) -> bool:
    """Whether one more call of ``transition`` moves ``record``: always for a transition
    that is no vote; for a vote, when it completes the quorum (what a confirmation of a
    move into a final step waits for)."""
    needed = quorum(transition)
    return needed is None or votes_cast(record, transition) + 1 >= needed


def recorded_vote(record: Any, transition: Any, label: Any) -> str:
    """``Your vote for “Approve” is recorded (1 of 2).``: what a vote that did not complete
    the quorum tells the voter."""
    cast, needed = votes_cast(record, transition), quorum(transition)
    return f"Your vote for “{label}” is recorded ({cast} of {needed})."
