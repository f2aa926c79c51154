"""``inbox(actor)``: what is waiting for ``actor``, across every workflow model.

For each model, ``actionable_by(actor)`` ordered by the stored ``next_due_at``
(the soonest pending deadline of the record's step, computed on entry in the
record's zone and business days; see deadlines.py), read ``limit`` rows at a
time, so each model costs one query (plus the fallback of a policy without a
filter). The models' rows are merged soonest first, records without a deadline
last, and asked for their actions in that order until ``limit`` list one.

``gather`` is the same walk with the question asked of each record given: the
admin's "My work" page asks the record's ``ModelAdmin`` what its change page
offers (admin/my_work.py), where ``inbox`` asks ``available_actions``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from itertools import count
from typing import Any

from django.db.models import F
from django.utils import timezone

from ..model.columns import NEXT_DUE_AT
from ..model.registry import workflow_models
from ..model.versions import workflow_of
from .actionable import actionable
from .claims_read import claimable

#: The action an inbox item offers on an unheld record of a ``claim=True`` step.
CLAIM = "claim"
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
    #: What the actor may do now, in declaration order: ``inbox`` lists the transitions
    #: ``available_actions`` lists, the admin's "My work" the buttons its change page offers.
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
    if models is None:
        models = workflow_models()
    sources = [model._default_manager.all() for model in models]
    return gather(sources, actor, partial(_available, actor=actor), now, limit=limit)


def gather(
    querysets: Iterable[Any],
    actor: Any,
    actions_of: Callable[[Any], Iterable[str]],
    now: datetime | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
) -> list[InboxItem]:
    """The records of ``querysets`` that ``actions_of`` lists an action on, soonest
    deadline first, at most ``limit``.

    The candidates are ``actionable_by(actor)``'s, read a page of ``limit`` per
    model at a time, merged in deadline order; each is asked ``actions_of(record)``
    in that order, and one that lists no action is passed over (another page of its
    model is read only when its first runs out). Raises ``ValueError`` for a
    ``limit`` that is not a positive integer.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"inbox(limit=...) must be a positive integer, not {limit!r}.")
    now = now or timezone.now()
    streams = [_candidates(queryset, actor, limit) for queryset in querysets]
    items: list[InboxItem] = []
    for record in heapq.merge(*streams, key=_order):
        actions = tuple(actions_of(record))
        if actions:
            items.append(_item(record, actions, now))
            if len(items) == limit:
                break
    return items


def _available(record: Any, *, actor: Any) -> list[str]:
    """The record's available actions; ``["claim"]`` for an unheld record of a
    ``claim=True`` step the actor may claim (its transitions wait for a holder)."""
    actions = record.workflow.available_actions(actor)
    if not actions and claims_first(record) and claimable(record, actor):
        return [CLAIM]
    return actions


def claims_first(record: Any) -> bool:
    """Whether the record's step is a ``claim=True`` step (its transitions need a holder)."""
    workflow = workflow_of(record)
    return workflow.claims(getattr(record, workflow.state_attribute))


def _candidates(queryset: Any, actor: Any, page: int) -> Iterator[Any]:
    """The model's actionable records by due instant, then by key, read ``page`` at a
    time: the first page is one query, and most callers need no other."""
    rows = actionable(queryset, actor)
    if _has_due_column(queryset.model):
        rows = rows.order_by(F(NEXT_DUE_AT).asc(nulls_last=True), "pk")
    else:
        rows = rows.order_by("pk")
    for start in count(0, page):
        found = list(rows[start : start + page])
        yield from found
        if len(found) < page:
            return


def _has_due_column(model: Any) -> bool:
    return any(field.name == NEXT_DUE_AT for field in model._meta.concrete_fields)


def _due(record: Any) -> datetime | None:
    return getattr(record, NEXT_DUE_AT, None)


def _order(record: Any) -> tuple[Any, ...]:
    due = _due(record)
    return (due is None, due or datetime.min, record._meta.label, record.pk)


def _item(record: Any, actions: tuple[str, ...], now: datetime) -> InboxItem:
    workflow = workflow_of(record)
    due = _due(record)
    return InboxItem(
        record=record,
        model=type(record),
        step=record.workflow.current_step,
        step_label=workflow.step_label(record.workflow.current_step),
        due_at=due,
        overdue=due is not None and due <= now,
        actions=actions,
    )
