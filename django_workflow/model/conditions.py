"""How a transition's ``when`` reads to people when it does not hold.

``Transition(unmet="…")`` says it in the project's words; without it the
condition describes itself: a callable by its docstring's first line (or its
name), a ``Q`` by its lookups.
"""

from __future__ import annotations

import inspect
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db.models import Q

from ..declaration import Transition

#: How a lookup reads; any other lookup reads as its own name.
_OPERATORS = {
    "exact": "=",
    "iexact": "=",
    "gt": ">",
    "gte": "≥",
    "lt": "<",
    "lte": "≤",
    "in": "in",
    "contains": "contains",
    "icontains": "contains",
    "startswith": "starts with",
    "istartswith": "starts with",
    "endswith": "ends with",
    "iendswith": "ends with",
    "range": "between",
}


def unmet_reason(transition: Transition, model: Any) -> str:
    """Why ``transition`` may not be called now, as a sentence: its ``unmet`` text, else
    "Its condition is not met: <what the condition says>."."""
    if transition.unmet is not None:
        return _sentence(str(transition.unmet))
    described = describe(transition.when, model)
    if not described:
        return "Its condition is not met."
    return f"Its condition is not met: {described.rstrip('.')}."


def describe(when: Any, model: Any) -> str:
    """What ``when`` asks for, in words; ``""`` when it cannot say (a lambda)."""
    if isinstance(when, Q):
        return _describe_q(when, model)
    if inspect.isfunction(when) or inspect.ismethod(when):
        doc = inspect.getdoc(when)
        if doc:
            return doc.strip().splitlines()[0]
        name = getattr(when, "__name__", "")
        if name.isidentifier():  # a named function, not "<lambda>"
            return name.replace("_", " ").strip()
    return ""


def _describe_q(condition: Q, model: Any) -> str:
    parts = []
    for child in condition.children:
        if isinstance(child, Q):
            text = _describe_q(child, model)  # a negation brings its own parentheses
            parts.append(f"({text})" if len(child.children) > 1 and not child.negated else text)
        else:
            parts.append(_describe_lookup(*child, model))
    text = f" {condition.connector.lower()} ".join(parts)
    return f"not ({text})" if condition.negated else text


def _describe_lookup(path: str, value: Any, model: Any) -> str:
    parts = path.split("__")
    known = len(parts) > 1 and parts[-1] in (*_OPERATORS, "isnull")
    lookup = parts.pop() if known else "exact"
    name = " ".join([_verbose(model, parts[0]), *parts[1:]])
    if lookup == "isnull":
        return f"{name} is {'empty' if value else 'not empty'}"
    return f"{name} {_OPERATORS[lookup]} {_value(value)}"


def _verbose(model: Any, name: str) -> str:
    try:
        return str(model._meta.get_field(name).verbose_name)
    except FieldDoesNotExist:  # a calculation
        return name.replace("_", " ")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return f"“{value}”"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(_value(item) for item in value)
    return str(value)


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."
