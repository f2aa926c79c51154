"""Reverse relations a declaration names (``Transition(cascade={"lines": ...})``,
``Join("lines", ...)``): read by the checks and the engine alike, so it imports nothing
of the package."""

from __future__ import annotations

from typing import Any


def relation_named(model: Any, related_name: str) -> Any:
    """The reverse relation of ``model`` whose accessor is ``related_name``, or ``None``."""
    for relation in model._meta.related_objects:
        if relation.get_accessor_name() == related_name:
            return relation
    return None


def children_of(record: Any, related_name: str, using: str) -> Any:
    """The records ``related_name`` reaches from ``record`` in database ``using``, through
    the base manager (a default manager's filter hides no child). ``LookupError`` when
    ``record``'s model has no such reverse relation."""
    relation = relation_named(type(record), related_name)
    if relation is None:
        raise LookupError(f"{type(record).__name__} has no reverse relation {related_name!r}.")
    rows = relation.related_model._base_manager.using(using)
    return rows.filter(**{relation.field.name: record})
