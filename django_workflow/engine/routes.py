"""Choosing a route: the first whose ``when`` holds, read with the caller's values."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from ..model.evaluation import holds, lookup_roots, referenced


def choose_route(routes: Iterable[Any], record: Any, db: str) -> str | None:
    """The ``to`` of the first route whose ``when`` holds for ``record``."""
    for route in routes:
        if route_holds(route.when, record, db):
            return route.to
    return None


def route_holds(when: Any, record: Any, db: str) -> bool:
    if when is None:
        return True
    if isinstance(when, Q):
        return holds(when, record, db)
    return bool(when(record))


def fields_read(routes: Iterable[Any], model: Any) -> set[str]:
    """Column attribute names the ``Q`` routes read, for the stale guard."""
    routes = [route for route in routes if isinstance(route.when, Q)]
    if not routes:  # most transitions: nothing read
        return set()
    by_name = {}
    for field in model._meta.concrete_fields:
        by_name[field.name] = by_name[field.attname] = field.attname
    calculations = model.workflow.calculations
    names: set[str] = set()
    for route in routes:
        if isinstance(route.when, Q):
            roots = lookup_roots(route.when)
            for name in roots & calculations.keys():  # a calculation: the fields it reads
                roots |= referenced(calculations[name])
            names |= {by_name[n] for n in roots if n in by_name}
    return names


def with_values(record: Any, values: dict[str, Any]) -> Any:
    """The record as it would be with the accepted values applied."""
    if not values:
        return record
    seen = copy.copy(record)
    for name, value in values.items():
        setattr(seen, name, value)
    return seen
