"""``Transition(..., cascade={related_name: transition})``: a parent's move takes its
children with it.

In the parent's transaction, before the parent's own guarded write, every child
reached through the reverse relation ``related_name`` that offers the named
transition in its current step takes it (trigger ``cascade``, the parent's actor,
child policies not asked); the others stay. If the parent's move fails (stale, an
action raising), the children's moves roll back with it. Children are locked step by
step, in key order, child rows before the parent row — the order a child's own
transition takes — so a child changed on another connection meanwhile is waited for
and then read as it was committed: it moves if its new step offers the transition,
and stays otherwise. The children's moves leave the parent's own join alone
(``joins.leaving``): the parent is leaving its step by this transition.

This room owns finding, locking and counting the children; ``moves.move_many`` writes
each group of plain moves, and ``manual`` moves a child whose transition needs a
decision of its own (routes, ``when``, an action, a cascade of its own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..errors import WorkflowError
from ..events import Event, Trigger
from ..relations import children_of
from .joins import leaving
from .moves import database, entry_changes, move_many

#: Moves one child (locked, in a step offering the transition) through the named
#: transition as ``actor``, as trigger ``cascade``; raises a ``WorkflowError`` when it
#: may not (its ``when`` does not hold, no route matched).
MoveChild = Callable[[Any, str, Any], Any]


def cascading(
    record: Any, cascade: dict[str, str], take: Callable[[Event], Any], move_child: MoveChild
) -> Callable[[Event], Any]:
    """``take`` (the parent's move, given its event) preceded by its children's moves, in
    one transaction; the parent's log row ``data`` gets the counts (``counted``)."""

    def take_with_children(event: Event) -> Any:
        with transaction.atomic(using=database(record)):
            with leaving(record):
                counts = {
                    related_name: move_children(record, related_name, name, event.actor, move_child)
                    for related_name, name in cascade.items()
                }
            return take(replace(event, data=counted(event.data, counts)))

    return take_with_children


def counted(data: Any, counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The parent's log ``data``: ``{"cascaded": <children moved>, "cascade": {related_name:
    {"moved": m, "stayed": s}}}``, beside the caller's own ``data`` (a dict's keys, or any
    other value under ``"data"``)."""
    mine = {"cascaded": sum(c["moved"] for c in counts.values()), "cascade": counts}
    if data is None:
        return mine
    if isinstance(data, dict):
        return {**data, **mine}
    return {"data": data, **mine}


def move_children(
    record: Any, related_name: str, name: str, actor: Any, move_child: MoveChild
) -> dict[str, int]:
    """Move the children offering ``name``; ``{"moved": m, "stayed": s}``."""
    children = children_of(record, related_name, database(record))
    workflow = children.model.workflow
    moved = 0
    for step in workflow.steps:
        declared = workflow.transition(step, name)
        if declared is None:
            continue
        in_step = children.filter(**{workflow.state_attribute: step})
        if _plain(declared):
            moved += _move_group(in_step, step, declared, actor)
        else:
            moved += _move_each(in_step, name, actor, move_child)
    return {"moved": moved, "stayed": children.count() - moved}


def _plain(declared: Any) -> bool:
    """Whether every child in the step takes the transition the same way: one target, no
    condition, nothing run per record — so one ``UPDATE`` moves them all."""
    return (
        declared.to is not None
        and not declared.routes
        and declared.when is None
        and declared.action is None
        and declared.quorum is None
        and not declared.cascade
    )


def _locked_keys(in_step: Any) -> list[Any]:
    return list(in_step.order_by("pk").select_for_update().values_list("pk", flat=True))


def _move_group(in_step: Any, step: str, declared: Any, actor: Any) -> int:
    """Lock the children still in ``step`` and move them together (``move_many``)."""
    keys = _locked_keys(in_step)
    if not keys:
        return 0
    model, db = in_step.model, in_step.db
    changes = entry_changes(model.workflow, declared.to, timezone.now())
    event = Event(step, declared.to, declared.name, Trigger.CASCADE, actor)
    claim = model._base_manager.using(db).filter(pk__in=keys)
    return len(move_many(model, claim, changes, event, db))


def _move_each(in_step: Any, name: str, actor: Any, move_child: MoveChild) -> int:
    """Lock the children in the step and move each as its own decision says; one that
    may not (``when``, no route) stays, the others go on."""
    moved = 0
    for child in in_step.order_by("pk").select_for_update():
        try:
            with transaction.atomic(using=in_step.db):  # a refusal undoes only this child
                move_child(child, name, actor)
        except WorkflowError:
            continue
        moved += 1
    return moved
