"""The worker's re-check of parents waiting in a join step: the safety net for children
whose step changed outside the engine (raw SQL, ``QuerySet.update()``), which no join
sees as it happens.

A poll hands over the parents whose re-check (``work.JoinRecheck``) is due, found
through the ``next_due_at`` index. In one transaction they are locked (``SKIP LOCKED``:
a parent another transaction holds is being evaluated there, and stays due), their
children's steps are read in one query per join, through the children's foreign key,
and each parent whose join is complete moves on as a child's move would have moved it
(trigger ``join``, no child named: none was seen completing it). The others are re-armed
one ``JOIN_RECHECK`` later. However many parents and children a batch holds, it costs
the same few queries, plus the moves.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from ..model.columns import NEXT_DUE_AT
from ..model.relations import relation_named
from ..model.versions import version_workflow
from ..process.pacing import turn
from ..work import JoinRecheck
from . import joins
from .kind_engines import KindEngine, register
from .rescheduling import rearm


def recheck(model: Any, work: Any, pks: list[Any], now: datetime, db: str) -> list[Any]:
    """Re-check the parents ``pks`` whose ``work`` is due at ``now``; the keys of those
    it moved on. A parent that left the step, or that another worker re-checked since
    it was read, is left alone."""
    step_joins = version_workflow(model, work.version).steps[work.step].joins
    moved = []
    with turn(db), transaction.atomic(using=db):
        rows = model.workflow.queryset(db).select_for_update(skip_locked=True)
        due = {model.workflow.state_attribute: work.step, f"{NEXT_DUE_AT}__lte": now}
        parents = list(rows.filter(pk__in=pks, **due).order_by("pk"))
        if not parents:
            return moved
        children = [children_steps(model, join, parents, db) for join in step_joins]
        waiting = []
        for parent in parents:
            target = _destination(step_joins, children, parent.pk)
            if target is None:
                waiting.append(parent)
                continue
            joins.move_on(parent, work.step, target, None)
            moved.append(parent.pk)
        rearm(model, waiting, work, now + work.deadline.fire_after, db, now)
    return moved


def children_steps(
    model: Any, join: Any, parents: list[Any], db: str
) -> dict[Any, set[str]] | None:
    """Per parent's key, the steps its children reached through ``join`` are in (a parent
    without children has none): one query, through the children's foreign key. ``None``
    for a join over no workflow relation (reported by the checks; it never completes)."""
    relation = relation_named(model, join.related_name)
    child_model = relation.related_model if relation is not None else None
    if getattr(child_model, "workflow", None) is None:
        return None
    field = relation.field
    by_value = {getattr(parent, field.target_field.attname): parent.pk for parent in parents}
    rows = child_model._base_manager.using(db).filter(**{f"{field.name}__in": parents})
    pairs = rows.order_by().values_list(field.attname, child_model.workflow.state_attribute)
    found: dict[Any, set[str]] = {parent.pk: set() for parent in parents}
    for value, step in pairs.distinct():
        found[by_value[value]].add(step)
    return found


def _destination(step_joins: Any, children: list[Any], pk: Any) -> str | None:
    """The first of the step's joins that sends the parent somewhere, as ``joins.evaluate``."""
    for join, steps in zip(step_joins, children, strict=True):
        target = None if steps is None else joins.decide(join, steps[pk])
        if target is not None:
            return target
    return None


register(
    JoinRecheck,
    KindEngine(
        fire=lambda picking, work, records: recheck(
            picking.model, work, [record.pk for record in records], picking.now, picking.db
        )
    ),
)
