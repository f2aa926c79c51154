"""Declarative business workflows for Django models."""

from typing import Any

from .declaration import Retry, Route, Step, Transition, Undo
from .errors import (
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    UndoNotPermitted,
    WorkflowError,
    WorkflowPermissionDenied,
)

__all__ = [
    "NoRouteMatched",
    "Retry",
    "Route",
    "StaleRecord",
    "Step",
    "Transition",
    "TransitionNotAllowed",
    "Undo",
    "UndoNotPermitted",
    "WorkflowError",
    "WorkflowModel",
    "WorkflowPermissionDenied",
]


def __getattr__(name: str) -> Any:
    # Django imports this package while loading apps, before models may be defined.
    if name == "WorkflowModel":
        from .models import WorkflowModel

        return WorkflowModel
    raise AttributeError(f"module 'django_workflow' has no attribute {name!r}")
