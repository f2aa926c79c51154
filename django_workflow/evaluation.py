"""Evaluating ``Q`` conditions and expressions against an instance, not its stored row.

The database does the evaluation (``SELECT … WHERE <condition>`` with no
table), with each field name standing for the instance's value as a bind
parameter, so lookups mean exactly what they mean in a queryset filter.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, Value
from django.db.models.sql import Query
from django.db.models.sql.constants import SINGLE


def lookup_roots(condition: Q) -> set[str]:
    """The field (or calculation) names a ``Q`` reads: ``sponsor`` of ``sponsor__name``."""
    roots: set[str] = set()
    for child in condition.children:
        if isinstance(child, Q):
            roots |= lookup_roots(child)
        elif isinstance(child, tuple):
            roots.add(child[0].split("__")[0])
    return roots


def lookups(condition: Q) -> set[str]:
    """Every lookup path a ``Q`` names: ``sponsor__name__iexact``."""
    found: set[str] = set()
    for child in condition.children:
        if isinstance(child, Q):
            found |= lookups(child)
        elif isinstance(child, tuple):
            found.add(child[0])
    return found


def holds(condition: Q, record: Any, using: str) -> bool:
    query = _values_query(record)
    workflow = getattr(type(record), "workflow", None)
    for name, expression in (workflow.calculations if workflow else {}).items():
        if name in lookup_roots(condition):  # computed from the instance's values
            query.add_annotation(expression, name, select=False)
    query.add_annotation(Value(1), "_holds")
    query.add_q(condition)
    return query.get_compiler(using=using).execute_sql(SINGLE) is not None


def evaluate(expression: Any, record: Any, using: str) -> Any:
    query = _values_query(record)
    query.add_annotation(expression, "_value")
    query.set_annotation_mask(["_value"])
    [(value,)] = list(query.get_compiler(using=using).results_iter())
    return value


def _values_query(record: Any) -> Query:
    query = Query(None)
    for field in record._meta.concrete_fields:
        value = Value(getattr(record, field.attname), output_field=_output(field))
        query.add_annotation(value, field.attname, select=False)
        if field.name != field.attname:
            query.add_annotation(value, field.name, select=False)
    return query


def _output(field: Any) -> Any:
    return field.target_field if field.is_relation else field
