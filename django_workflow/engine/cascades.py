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
(``joins.leaving_token``): the parent is leaving its step by this transition.

This room owns finding, locking and counting the children; ``moves.move_many`` writes
each group of plain moves, and ``manual`` moves a child whose transition needs a
decision of its own (routes, ``when``, an action, a cascade of its own).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..errors import WorkflowError
from ..model.relations import children_of
from ..model.triggers import Event, Trigger
from .joins import leaving_token, left
from .moves import database, entry_changes, move_many

#: A child's move through the named transition as ``actor`` (trigger ``cascade``), decided
#: but not taken: its own ``cascade`` (``None`` without one) and the move itself, given
#: what that cascade moved. Raises a ``WorkflowError`` when the child may not move (its
#: ``when`` does not hold, no route matched).
DecideChild = Callable[[Any, str, Any], tuple[Any, Callable[[Any], Any]]]

#: One record's children to move, as a generator: it yields ``(child, transition name)``
#: for each child whose move is decided on its own, is sent whether it moved, and
#: returns the counts of the record's cascade.
Children = Generator[tuple[Any, str], bool, dict[str, dict[str, int]]]


def cascading(
    record: Any, cascade: dict[str, str], take: Callable[[Event], Any], decide_child: DecideChild
) -> Callable[[Event], Any]:
    """``take`` (the parent's move, given its event) preceded by its children's moves, in
    one transaction; the parent's log row ``data`` gets the counts (``counted``)."""

    def take_with_children(event: Event) -> Any:
        with transaction.atomic(using=database(record)):
            counts = walk(record, cascade, event.actor, decide_child)
            return take(replace(event, data=counted(event.data, counts)))

    return take_with_children


@dataclass
class _Descent:
    """A child whose move is decided: taken once its own cascade (if any) is done, in a
    transaction of its own (``atomic``, entered: a savepoint) that a refusal rolls back
    with its children's moves and whatever they queued for after commit."""

    take: Callable[[Any], Any]
    atomic: Any
    leaving: Any = None


def walk(root: Any, cascade: dict[str, str], actor: Any, decide_child: DecideChild) -> Any:
    """Move ``root``'s children (``cascade``), theirs before each (any depth, without
    recursion: a stack of ``_children`` generators), each record at most once (a cycle in
    the data comes back to a record already moving: it stays). A child whose move is
    refused undoes its own children's. Returns ``root``'s counts."""
    visited = {_key(root)}
    top = _Descent(lambda counts: None, None, leaving_token(root))
    stack: list[tuple[Children, _Descent]] = [(_children(root, cascade, actor, visited), top)]
    try:
        return _descend(stack, visited, actor, decide_child)
    except BaseException:
        error = sys.exc_info()
        for _children_left, descent in reversed(stack):  # in the order they were opened
            left(descent.leaving)
            if descent.atomic is not None:
                descent.atomic.__exit__(*error)
        raise


def _descend(
    stack: list[tuple[Children, _Descent]], visited: set[Any], actor: Any, decide: DecideChild
) -> Any:
    """``walk``'s loop: run the generator on top of ``stack`` until it asks for a child,
    decide the child, and either take its move or push its own children."""
    sent: bool | None = None
    while True:
        children, descent = stack[-1]
        try:
            child, name = children.send(sent)  # type: ignore[arg-type]
        except StopIteration as finished:
            stack.pop()
            left(descent.leaving)
            if not stack:
                return finished.value
            sent = _finish(descent, finished.value)
            continue
        sent = False
        if _key(child) in visited:
            continue
        visited.add(_key(child))
        try:
            own_cascade, take = decide(child, name, actor)
        except WorkflowError:
            continue
        atomic = transaction.atomic(using=database(child))
        atomic.__enter__()
        if own_cascade:
            descent = _Descent(take, atomic, leaving_token(child))
            stack.append((_children(child, own_cascade, actor, visited), descent))
            sent = None
        else:
            sent = _finish(_Descent(take, atomic), None)


def _finish(descent: _Descent, counts: Any) -> bool:
    """Take a child's decided move (``counts``: what its own cascade moved) and close its
    transaction: committed into the parent's, or rolled back on a refusal."""
    try:
        descent.take(counts)
    except WorkflowError:
        descent.atomic.__exit__(*sys.exc_info())
        return False
    except BaseException:
        descent.atomic.__exit__(*sys.exc_info())
        raise
    descent.atomic.__exit__(None, None, None)
    return True


def _key(record: Any) -> tuple[Any, Any]:
    return (record._meta.concrete_model, record.pk)


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


def _children(record: Any, cascade: dict[str, str], actor: Any, visited: set[Any]) -> Children:
    """``record``'s children to move, relation by relation (see ``Children``)."""
    counts = {}
    for related_name, name in cascade.items():
        moving = _children_over(record, related_name, name, actor, visited)
        counts[related_name] = yield from moving
    return counts


def _children_over(
    record: Any, related_name: str, name: str, actor: Any, visited: set[Any]
) -> Children:
    """Move the children over ``related_name`` offering ``name``: the plain ones of a step
    together, the others one by one (yielded); ``{"moved": m, "stayed": s}``."""
    children = children_of(record, related_name, database(record))
    workflow = children.model.workflow
    moved = 0
    for step in workflow.steps:
        declared = workflow.transition(step, name)
        if declared is None:
            continue
        in_step = children.filter(**{workflow.state_attribute: step})
        if _plain(declared):  # leaving out the records already moving (a cycle)
            concrete = children.model._meta.concrete_model
            seen = [pk for model, pk in visited if model is concrete]
            moved += _move_group(in_step.exclude(pk__in=seen), step, declared, actor, visited)
            continue
        for child in in_step.order_by("pk").select_for_update():
            moved += bool((yield (child, name)))
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


def _move_group(in_step: Any, step: str, declared: Any, actor: Any, visited: set[Any]) -> int:
    """Lock the children still in ``step`` and move them together (``move_many``)."""
    keys = _locked_keys(in_step)
    if not keys:
        return 0
    visited.update((in_step.model._meta.concrete_model, key) for key in keys)
    model, db = in_step.model, in_step.db
    changes = entry_changes(model.workflow, declared.to, timezone.now())
    event = Event(step, declared.to, declared.name, Trigger.CASCADE, actor)
    claim = model._base_manager.using(db).filter(pk__in=keys)
    return len(move_many(model, claim, changes, event, db))
