"""``Join(related_name, all_in=[...], to=..., any_in={child_step: parent_step})``: a parent
waiting in a step until its children are done.

A join is evaluated in the transaction of every change that can complete it: the
parent entering the join step (no children: it moves on at once), and a child's step
change, creation or deletion. The parent row is locked first (``select_for_update``)
and its children read after the lock, so of two last children finishing at once on two
connections the second waits for the first's commit, then reads both done: the parent
moves exactly once. A bulk move of children evaluates each parent once.

A parent cascading over its children (``Transition(cascade=...)``) is leaving its step
by a transition of its own: the children's moves do not evaluate its join (``leaving``),
else a cancel voiding the last open children would complete the join first and find
its own parent moved. The parent's own move then evaluates the step it enters.

This room owns finding the parents and deciding where a parent goes; ``moves`` writes
the parent's move (trigger ``join``, ``data`` naming the completing child), and
``join_rechecks`` is the worker's re-check of waiting parents.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from functools import cache
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from ..model.columns import STATE_ENTERED_AT
from ..model.registry import workflow_models
from ..model.relations import children_of, relation_named
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from . import moves

#: The parents whose children a cascade is moving (``leaving``), by ``_named``.
_LEAVING: ContextVar[frozenset[tuple[Any, str, Any]]] = ContextVar("leaving", default=frozenset())


def leaving_token(record: Any) -> Any:
    """From now until ``left(token)``, the moves of ``record``'s children leave its join
    alone: ``record`` is about to leave its step by its own transition, in the same
    transaction. Tokens are given back in the order opposite to their taking."""
    return _LEAVING.set(_LEAVING.get() | {_named(type(record), moves.database(record), record.pk)})


def left(token: Any) -> None:
    """``record`` of ``leaving_token`` moved (or stays): its join is asked again."""
    _LEAVING.reset(token)


def _named(model: Any, db: str, pk: Any) -> tuple[Any, str, Any]:
    """A parent row, the same whichever proxy of its model an instance is of."""
    return (model._meta.concrete_model, db, pk)


def after_moves(
    model: Any,
    pks: list[Any],
    db: str,
    step: str | None,
    instance: Any = None,
    answers: moves.Answers | None = None,
) -> None:
    """The hook of every step change and creation of ``model``'s records ``pks`` into
    ``step``: those records are evaluated when ``step`` holds a join, and the parents of
    those that are children of one are evaluated. ``instance`` (the caller's, of a single
    move) follows its record on."""
    if model.workflow is None or not pks:
        return
    if step in _join_steps(model):
        for pk in pks:
            moved = evaluate(model, pk, db, child=None)
            if moved is not None and instance is not None:
                owned = model.workflow.owned_columns
                moves.apply(instance, {f: v for f, v in moved.__dict__.items() if f in owned})
    for parent_model, field in _parents_over(model):
        rows = model._base_manager.using(db).filter(pk__in=pks).order_by("pk")
        first_child: dict[Any, Any] = {}  # the child named on the parent's log row
        for pk, parent_pk in rows.values_list("pk", field.attname):
            if parent_pk is not None:
                first_child.setdefault(parent_pk, pk)
        for parent_pk in sorted(first_child):
            evaluate(parent_model, parent_pk, db, child=_label(model, first_child[parent_pk]))


#: The join parents a deletion is taking, from their ``pre_delete`` (Django sends every
#: one before it deletes anything) to their own ``post_delete`` (after their children's),
#: each with the deletion's ``origin``: a mark left by a deletion that was refused half-way
#: (a ``pre_delete`` receiver raising) is no mark for the next deletion, whose origin differs.
_deleting = threading.local()
#: Marks kept at most: past that, the oldest (from refused deletions) go.
_MARKS_KEPT = 10_000


_NONE = object()


def parents_of(record: Any) -> list[tuple[Any, Any]]:
    """``(parent model, parent key)`` of each join parent ``record`` is a child of."""
    found = []
    for parent_model, field in _parents_over(type(record)):
        parent_pk = getattr(record, field.attname)
        if parent_pk is not None:
            found.append((parent_model, parent_pk))
    return found


def _being_deleted() -> dict[tuple[Any, str, Any], Any]:
    return _deleting.__dict__.setdefault("rows", {})


def parent_deleting(
    sender: Any, instance: Any, using: str, origin: Any = None, **kwargs: Any
) -> None:
    """``pre_delete``: a parent waiting in a join that a deletion takes (itself, or its
    own parent's, a grandparent's, cascading) is no parent to move when its children go."""
    if getattr(sender, "workflow", None) is not None and _join_steps(sender):
        marks = _being_deleted()
        if len(marks) >= _MARKS_KEPT:
            marks.clear()
        marks[_named(sender, using, instance.pk)] = origin


def child_deleted(
    sender: Any, instance: Any, using: str, origin: Any = None, **kwargs: Any
) -> None:
    """``post_delete``, in the deletion's transaction: a deleted child's parent's join may
    now be complete — unless the parent is being deleted too (its children go first),
    whether the deletion began with it or further up (a customer taking its orders)."""
    model = type(instance)
    _being_deleted().pop(_named(model, using, instance.pk), None)  # gone: no longer a parent
    for parent_model, field in _parents_over(model):
        parent_pk = getattr(instance, field.attname)
        if parent_pk is None or _deleted_with(origin, parent_model, parent_pk):
            continue
        if _being_deleted().get(_named(parent_model, using, parent_pk), _NONE) is origin:
            continue  # the same deletion takes the parent too
        evaluate(parent_model, parent_pk, using, child=_label(model, instance.pk))


def _deleted_with(origin: Any, parent_model: Any, parent_pk: Any) -> bool:
    """Whether the deletion started from the parent (or a queryset holding it)."""
    if isinstance(origin, parent_model):
        return origin.pk == parent_pk
    if isinstance(origin, QuerySet) and origin.model is parent_model:
        return origin.filter(pk=parent_pk).exists()
    return False


def evaluate(model: Any, pk: Any, db: str, child: str | None) -> Any:
    """Lock the parent; if it waits in a join step whose join is complete, move it."""
    workflow = model.workflow
    if _named(model, db, pk) in _LEAVING.get():
        return None
    with transaction.atomic(using=db):
        parent = model._base_manager.using(db).select_for_update().filter(pk=pk).first()
        if parent is None:
            return None
        step = getattr(parent, workflow.state_attribute)
        declared = workflow_of(parent).steps.get(step)  # the parent's own version's joins
        for join in declared.joins if declared is not None else ():
            target = destination(parent, join, db)
            if target is not None:
                return move_on(parent, step, target, child)
    return None


def destination(parent: Any, join: Any, db: str) -> str | None:
    """Where ``join`` sends ``parent`` now: an ``any_in`` target when one child is in its
    child step, else ``to`` when every child is in ``all_in``, else ``None``."""
    children = _children(parent, join, db)
    if children is None:
        return None
    state = children.model.workflow.state_attribute
    return decide(join, set(children.values_list(state, flat=True).distinct()))


def decide(join: Any, steps: set[str]) -> str | None:
    """Where ``join`` sends a parent whose children are in ``steps`` (the set of them)."""
    for child_step, parent_step in join.any_in.items():
        if child_step in steps:
            return parent_step
    return join.to if steps <= set(join.all_in) else None


def progress(parent: Any, join: Any) -> tuple[int, int] | None:
    """``(done, total)``: how many of ``parent``'s children are in one of the join's
    ``all_in`` steps, of how many, counted in one query; ``None`` when the join names no
    workflow relation (reported by the checks)."""
    children = _children(parent, join, moves.database(parent))
    if children is None:
        return None
    state = children.model.workflow.state_attribute
    counts = children.aggregate(
        done=Count("pk", filter=Q(**{f"{state}__in": list(join.all_in)})), total=Count("pk")
    )
    return counts["done"], counts["total"]


def _children(parent: Any, join: Any, db: str) -> Any:
    """The children ``join`` waits for, or ``None`` when its relation is unknown or leads
    to a model without a workflow (reported by the checks)."""
    try:
        children = children_of(parent, join.related_name, db)
    except LookupError:
        return None
    return children if getattr(children.model, "workflow", None) is not None else None


def move_on(parent: Any, step: str, target: str, child: str | None) -> Any:
    """Move ``parent``, locked by the caller in ``step``, to ``target`` (trigger ``join``)."""
    workflow = workflow_of(parent)
    data = None if child is None else {"child": child}
    entered = getattr(parent, STATE_ENTERED_AT)
    event = Event(step, target, "", Trigger.JOIN, data=data, from_state_entered_at=entered)
    return moves.move_locked(parent, moves.entry_changes(workflow, target, timezone.now()), event)


def _label(model: Any, pk: Any) -> str:
    return f"{model._meta.label} {pk}"


@cache
def _join_steps(model: Any) -> dict[str, tuple[Any, ...]]:
    """The model's steps that hold a join in some version, with their joins (every
    version's)."""
    workflow = model.workflow
    if workflow is None:
        return {}
    found: dict[str, tuple[Any, ...]] = {}
    for version in workflow.family():
        for name, step in version.steps.items():
            found[name] = (*found.get(name, ()), *step.joins)
    return {name: joins for name, joins in found.items() if joins}


@cache
def _parents_over(model: Any) -> tuple[tuple[Any, Any], ...]:
    """``(parent model, child's foreign key)`` of every join reaching ``model``'s records."""
    found = []
    for parent_model in workflow_models():
        for joins in _join_steps(parent_model).values():
            for join in joins:
                relation = relation_named(parent_model, join.related_name)
                if relation is not None and relation.related_model is model:
                    found.append((parent_model, relation.field))
    return tuple(dict.fromkeys(found))


def acts_after(model: Any, step: str) -> bool:
    """Whether ``after_moves`` has anything to do for a record of ``model`` entering ``step``."""
    return model.workflow is not None and (step in _join_steps(model) or bool(_parents_over(model)))


moves.AFTER_MOVES.append(after_moves)
moves.ACTING_AFTER.append(acts_after)
