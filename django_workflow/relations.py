"""Reverse relations a declaration names (``Transition(cascade={"lines": ...})``): read by
the checks and the engine alike, so it imports nothing of the package."""

from __future__ import annotations

from typing import Any


def relation_named(model: Any, related_name: str) -> Any:
    """The reverse relation of ``model`` whose accessor is ``related_name``, or ``None``."""
    for relation in model._meta.related_objects:
        if relation.get_accessor_name() == related_name:
            return relation
    return None
