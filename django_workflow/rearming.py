"""Re-arming action timeouts whose anchor moved later.

An action timeout fires once per round: its fired column is set when it
fires and cleared when a new round starts. Entering the step starts one (the
engine clears the column). Moving the anchor later starts one too, however
it is moved: by the timeout's own action, by ``save()`` anywhere, or by
``QuerySet.update()`` on the workflow's queryset. The anchor values a record
was loaded with are remembered so ``save()`` can tell.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from django.db.models import Case, DateTimeField, F, Q, Value, When

from .evaluation import evaluate

LOADED = "_workflow_loaded_anchors"


def _calculations(workflow: Any) -> dict[str, Any]:
    return workflow.calculations if isinstance(workflow.calculations, dict) else {}


@cache
def _watched(model: Any) -> frozenset[str]:
    """Attribute names whose change can move an anchor (read on every load: computed once)."""
    workflow = model.workflow
    calculations = _calculations(workflow)
    names: set[str] = set()
    for _fired, anchor in workflow.fired_anchors:
        if anchor in calculations:
            names |= _referenced(calculations[anchor])
        else:
            names.add(anchor)
    return frozenset(names)


def _referenced(expression: Any) -> set[str]:
    if isinstance(expression, F):
        return {expression.name}
    names: set[str] = set()
    for source in getattr(expression, "get_source_expressions", list)():
        names |= _referenced(source)
    return names


def remember(record: Any) -> None:
    """Note the anchor values the instance holds now (deferred fields are left out)."""
    workflow = type(record).workflow
    if workflow is None or not workflow.fired_anchors:
        return
    values = record.__dict__
    watched = _watched(type(record))
    setattr(record, LOADED, {name: values[name] for name in watched if name in values})


def rearm_before_save(record: Any, update_fields: Any) -> Any:
    """Clear the fired column of every action timeout whose anchor this save moves later."""
    loaded = getattr(record, LOADED, None)
    if loaded is None:
        return update_fields
    workflow = type(record).workflow
    cleared = [
        fired
        for fired, anchor in workflow.fired_anchors
        if getattr(record, fired, None) is not None and _moved_later(record, anchor, loaded)
    ]
    for fired in cleared:
        setattr(record, fired, None)
    if update_fields is not None and cleared:
        update_fields = {*update_fields, *cleared}
    return update_fields


def _moved_later(record: Any, anchor: str, loaded: dict[str, Any]) -> bool:
    calculations = _calculations(type(record).workflow)
    if anchor not in calculations:
        if anchor not in loaded:
            return False
        return _later(loaded[anchor], getattr(record, anchor))
    names = _referenced(calculations[anchor])
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
