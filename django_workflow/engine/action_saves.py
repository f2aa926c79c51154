"""What an action's own ``save()`` would write, collected for the engine to write with the
move or the firing in one ``UPDATE`` and one signal pair (docs/transitions.md, "What a
step change writes")."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db.models.signals import post_save, pre_save

#: Set on an instance while the engine saves it: ``save()`` collects what it would write here.
COLLECTING = "_workflow_collecting"


@contextmanager
def collecting(record: Any) -> Iterator[dict[str, Any]]:
    """While open, ``record.save()`` (the model's own ``save()`` runs) writes nothing and
    sends nothing: what it would write is collected, for the engine to write with the step
    change in one ``UPDATE`` and one signal pair. An action that saves itself runs in it."""
    if COLLECTING in record.__dict__:  # already open: one collection
        yield record.__dict__[COLLECTING]
        return
    record.__dict__[COLLECTING] = collected = {}
    try:
        yield collected
    finally:
        record.__dict__.pop(COLLECTING, None)


def saved_by(record: Any) -> dict[str, Any]:
    """What ``record.save()`` would write, with what it already collected, unwritten."""
    with collecting(record) as collected:
        record.save()
    return dict(collected)


def prepared(record: Any, names: Iterable[str]) -> dict[str, Any]:
    """The values a save writes for the fields ``names`` (``auto_now`` applied)."""
    values = {}
    for name in names:
        field = record._meta.get_field(name)
        values[field.attname] = field.pre_save(record, False)
    return values


def field_values(record: Any, like: dict[str, Any] | None = None) -> dict[str, Any]:
    """The instance's own field values (all, or those in ``like``); mutable ones copied,
    so an action that changes a dict or a list in place shows as a change."""
    names = like.keys() if like is not None else _own_attnames(type(record))
    values = {name: record.__dict__.get(name) for name in names}
    return {
        name: copy.deepcopy(value) if isinstance(value, dict | list | set) else value
        for name, value in values.items()
    }


def _own_attnames(model: Any) -> list[str]:
    owned = model.workflow.owned_columns
    return [f.attname for f in model._meta.concrete_fields if f.attname not in owned]


def saves_visibly(model: Any) -> bool:
    """Whether a ``save()`` could do more than write columns: an overridden ``save`` or
    receivers of its signals."""
    overridden = not getattr(model.save, "workflow_own", False)
    return overridden or pre_save.has_listeners(model) or post_save.has_listeners(model)
