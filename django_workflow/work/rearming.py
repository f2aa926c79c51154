"""Re-arming action timeouts whose anchor moved later.

An action timeout fires once per round: its fired column is set when it
fires and cleared when a new round starts. Entering the step starts one (the
engine clears the column). Moving the anchor later starts one too, however
it is moved: by the timeout's own action, by ``save()`` anywhere, or by
``QuerySet.update()`` on the workflow's queryset. The step and the anchor
values a record was loaded with are remembered, so ``save()`` can tell.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from django.db.models import Case, DateTimeField, F, Q, Value, When

from ..model.evaluation import evaluate, referenced
from ..model.versions import workflow_of

LOADED = "_workflow_loaded"


@cache
def _watched(model: Any) -> frozenset[str]:
    """Attribute names whose change can move an anchor (read on every load: computed once)."""
    workflow = model.workflow
    names: set[str] = set()
    for _fired, anchor in workflow.fired_anchors:
        if anchor in workflow.calculations:
            names |= referenced(workflow.calculations[anchor])
        else:
            names.add(anchor)
    return frozenset(names)


def remember(record: Any, fields: Any = None) -> None:
    """Note the step and the anchor values the instance holds now (deferred fields left out).

    With ``fields`` (a partial ``refresh_from_db``), only those are noted again.
    """
    workflow = workflow_of(record)
    if workflow is None:
        return
    values = record.__dict__
    names = {workflow.state_attribute, *_watched(type(record))}
    snapshot = {name: values[name] for name in names if name in values}
    if fields is not None and LOADED in values:
        refreshed = {record._meta.get_field(f).attname for f in fields}
        snapshot = {**values[LOADED], **{k: v for k, v in snapshot.items() if k in refreshed}}
    setattr(record, LOADED, snapshot)


def loaded_step(record: Any) -> str | None:
    """The step the instance was loaded in (or last moved to), if known."""
    loaded = getattr(record, LOADED, None) or {}
    return loaded.get(workflow_of(record).state_attribute)


def moved_anchors(record: Any) -> list[str]:
    """The fired columns of the loaded step whose anchor the instance moved later."""
    loaded = getattr(record, LOADED, None)
    step = loaded_step(record)
    if loaded is None or step is None:
        return []
    workflow = workflow_of(record)
    anchors = dict(workflow.fired_anchors)
    return [
        fired
        for fired in workflow.fired_fields(step)
        if _moved_later(record, anchors[fired], loaded)
    ]


def _moved_later(record: Any, anchor: str, loaded: dict[str, Any]) -> bool:
    calculations = workflow_of(record).calculations
    if anchor not in calculations:
        if anchor not in loaded:
            return False
        return _later(loaded[anchor], getattr(record, anchor))
    names = referenced(calculations[anchor])
    if not any(name in loaded and loaded[name] != getattr(record, name) for name in names):
        return False
    before = copy.copy(record)
    for name in names & loaded.keys():
        setattr(before, name, loaded[name])
    db = record._state.db or "default"
    return _later(
        evaluate(calculations[anchor], before, db), evaluate(calculations[anchor], record, db)
    )


def _later(old: Any, new: Any) -> bool:
    return new is not None and (old is None or new > old)


def rearm_in_update(workflow: Any, values: dict[str, Any]) -> dict[str, Any]:
    """Add to a ``QuerySet.update()`` the clearing of fired columns whose anchor it moves later."""
    extra = {}
    for fired, anchor in workflow.fired_anchors:
        new = values.get(anchor)
        if new is None or fired in values:
            continue
        extra[fired] = Case(
            When(Q(**{f"{anchor}__lt": new}) | Q(**{f"{anchor}__isnull": True}), then=Value(None)),
            default=F(fired),
            output_field=DateTimeField(),
        )
    return {**values, **extra}
