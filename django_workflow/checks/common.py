"""What every rule family shares: building messages, naming places, small lookups."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db import models

from ..durations import InvalidDuration, parse_timedelta

Messages = Iterator[checks.CheckMessage]


def error(model: Any, message: str, hint: str, code: str) -> checks.Error:
    """``django_workflow.<code>`` on ``model``. Django names ``obj`` before the message
    (``expenses.Claim: (django_workflow.E012) step …``), so the message does not."""
    return checks.Error(
        message,
        hint=hint or None,
        obj=model,
        id=f"django_workflow.{code}",
    )


def warning(model: Any, message: str, hint: str, code: str) -> checks.Warning:
    return checks.Warning(
        message,
        hint=hint or None,
        obj=model,
        id=f"django_workflow.{code}",
    )


def info(model: Any, message: str, hint: str, code: str) -> checks.Info:
    return checks.Info(message, hint=hint or None, obj=model, id=f"django_workflow.{code}")


def where(step: str, entity: str = "") -> str:
    """``step 'review', transition 'approve'``: the place a message is about."""
    return f"step {step!r}" + (f", {entity}" if entity else "")


def field(model: Any, name: str) -> models.Field | None:
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def check_method(model: Any, place: str, action: Any) -> Messages:
    """E016: an action names a method of the model."""
    if not callable(getattr(model, str(action), None)):
        yield error(
            model,
            f"{place}: action {action!r} is not a method of the model.",
            f"Define `def {action}(self):` on {model.__name__}.",
            "E016",
        )


def check_duration(model: Any, place: str, value: Any) -> Messages:
    """E026: a wall-clock duration (no business days) can be read."""
    try:
        parse_timedelta(value)
    except InvalidDuration as problem:
        yield error(model, f"{place}: {problem}", "", "E026")
