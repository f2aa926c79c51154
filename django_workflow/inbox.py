"""``inbox(actor)``: what is waiting for ``actor``, across every workflow model.

For each model, ``actionable_by(actor)`` ordered by the stored ``next_due_at``
(the soonest pending deadline of the record's step, computed on entry in the
record's zone and business days; see deadlines.py), so each model costs one
query (plus the fallback of a policy without a filter) and reads at most
``limit`` rows. The models' lists are merged soonest first, records without
a deadline last, and only the items kept are asked for their actions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import F
from django.utils import timezone

from .actionable import actionable
from .columns import NEXT_DUE_AT

#: How many items ``inbox`` returns unless told.
DEFAULT_LIMIT = 50


@dataclass(frozen=True)
class InboxItem:
    """One record waiting for the actor."""

    record: Any
    model: type
    #: The step's name and how people read it.
    step: str
    step_label: Any
    #: The soonest pending deadline of the step (``None``: none); ``overdue`` if past ``now``.
    due_at: datetime | None
    overdue: bool
    #: The transitions the actor may call now, in declaration order.
    actions: tuple[str, ...]


def inbox(
    actor: Any,
    now: datetime | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
    models: Any = None,
) -> list[InboxItem]:
    """The records ``actor`` can act on, soonest deadline first, at most ``limit``.

    ``models`` narrows the workflow models searched (default: all). Raises
    ``ValueError`` for a ``limit`` that is not a positive integer.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"inbox(limit=...) must be a positive integer, not {limit!r}.")
    now = now or timezone.now()
    if models is None:
        from .workflow_model import workflow_models

        models = workflow_models()
    found = [record for model in models for record in _soonest(model, actor, limit)]
    found.sort(key=_order)
    return [_item(record, actor, now) for record in found[:limit]]


def _soonest(model: Any, actor: Any, limit: int) -> list[Any]:
    """The model's first ``limit`` actionable records by due instant, then by key."""
    rows = actionable(model._default_manager.all(), actor)
    if _has_due_column(model):
        rows = rows.order_by(F(NEXT_DUE_AT).asc(nulls_last=True), "pk")
    else:
        rows = rows.order_by("pk")
    return list(rows[:limit])


def _has_due_column(model: Any) -> bool:
    return any(field.name == NEXT_DUE_AT for field in model._meta.concrete_fields)


def _due(record: Any) -> datetime | None:
    return getattr(record, NEXT_DUE_AT, None)


def _order(record: Any) -> tuple[Any, ...]:
    due = _due(record)
    return (due is None, due or datetime.min, record._meta.label, record.pk)


def _item(record: Any, actor: Any, now: datetime) -> InboxItem:
    workflow = type(record).workflow
    due = _due(record)
    return InboxItem(
        record=record,
        model=type(record),
        step=record.current_step,
        step_label=workflow.step_label(record.current_step),
        due_at=due,
        overdue=due is not None and due <= now,
        actions=tuple(record.available_actions(actor)),
    )
