"""Evaluating ``Q`` conditions and expressions against an instance, not its stored row.

The database does the evaluation (``SELECT … WHERE <condition>`` with no
table), with each field name standing for the instance's value as a bind
parameter, so lookups mean exactly what they mean in a queryset filter.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F, Q, Value
from django.db.models.expressions import CombinedExpression
from django.db.models.sql import Query
from django.db.models.sql.constants import SINGLE


def lookups(condition: Q) -> set[str]:
    """Every lookup path a ``Q`` names, compared values included: ``sponsor__name__iexact``,
    and ``limit`` of ``amount__gte=F("limit")``."""
    found: set[str] = set()
    for child in condition.children:
        if isinstance(child, Q):
            found |= lookups(child)
        elif isinstance(child, tuple):
            found.add(child[0])
            found |= referenced(child[1])
    return found


def lookup_roots(condition: Q) -> set[str]:
    """The field (or calculation) names a ``Q`` reads: ``sponsor`` of ``sponsor__name``."""
    return {path.split("__")[0] for path in lookups(condition)}


def holds(condition: Q, record: Any, using: str) -> bool:
    workflow = getattr(type(record), "workflow", None)
    roots = lookup_roots(condition)
    calculations = {
        name: expression
        for name, expression in (workflow.calculations if workflow else {}).items()
        if name in roots
    }
    names = roots.union(*(referenced(e) for e in calculations.values()))
    query = _values_query(record, names)
    for name, expression in calculations.items():  # computed from the instance's values
        query.add_annotation(expression, name, select=False)
    query.add_annotation(Value(1), "_holds")
    query.add_q(condition)
    return query.get_compiler(using=using).execute_sql(SINGLE) is not None


def evaluate(expression: Any, record: Any, using: str) -> Any:
    """The expression's value for the instance: in Python for a field plus or minus
    constants (the usual calculated deadline), else by the database."""
    known, value = _in_python(expression, record)
    if known:
        return value
    query = _values_query(record, referenced(expression))
    query.add_annotation(expression, "_value")
    query.set_annotation_mask(["_value"])
    [(value,)] = list(query.get_compiler(using=using).results_iter())
    return value


#: ``F("a") + x`` and ``F("a") - x``: what Python computes as SQL would (NULL stays NULL).
_ARITHMETIC = {"+": lambda a, b: a + b, "-": lambda a, b: a - b}


def _in_python(expression: Any, record: Any) -> tuple[bool, Any]:
    if isinstance(expression, F):
        return True, getattr(record, expression.name)
    if isinstance(expression, Value):
        return True, expression.value
    if isinstance(expression, CombinedExpression) and expression.connector in _ARITHMETIC:
        (left_known, left), (right_known, right) = (
            _in_python(expression.lhs, record),
            _in_python(expression.rhs, record),
        )
        if left_known and right_known:
            if left is None or right is None:
                return True, None
            return True, _ARITHMETIC[expression.connector](left, right)
    return False, None


def referenced(expression: Any) -> set[str]:
    """The field names an expression reads."""
    if isinstance(expression, F):
        return {expression.name}
    names: set[str] = set()
    for source in getattr(expression, "get_source_expressions", list)():
        names |= referenced(source)
    return names


def _values_query(record: Any, names: set[str] | None = None) -> Query:
    """A query with no table whose "columns" are the instance's values (those named)."""
    query = Query(None)
    for field in record._meta.concrete_fields:
        if names is not None and not {field.name, field.attname} & names:
            continue
        value = Value(getattr(record, field.attname), output_field=_output(field))
        query.add_annotation(value, field.attname, select=False)
        if field.name != field.attname:
            query.add_annotation(value, field.name, select=False)
    return query


def _output(field: Any) -> Any:
    return field.target_field if field.is_relation else field
