"""Declarative business workflows for Django models."""

from typing import TYPE_CHECKING, Any

from . import moved
from .declaration import (
    Every,
    Join,
    Receive,
    Retry,
    Route,
    Sla,
    Step,
    Timeout,
    Transition,
    Undo,
)
from .errors import (
    AlreadyClaimed,
    AlreadyVoted,
    ConditionUnmet,
    DirectStepChange,
    InvalidDelivery,
    InvalidLogValue,
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    UndoNotPermitted,
    UnmappedSteps,
    UnsavedRecord,
    WorkflowError,
    WorkflowPermissionDenied,
)
from .reading.inbox import (
    inbox as inbox,  # imports no model: safe while Django loads the apps
)

moved.install()  # paths of release 0.3 and before still import (docs/upgrading.md)

if TYPE_CHECKING:  # loaded lazily at run time (below); type checkers see them here
    from .engine.firing import run_work as run_work
    from .engine.receiving import Delivery as Delivery
    from .engine.receiving import deliver as deliver
    from .workflow_model import WorkflowModel as WorkflowModel

__all__ = [
    "AlreadyClaimed",
    "AlreadyVoted",
    "ConditionUnmet",
    "Delivery",
    "DirectStepChange",
    "Every",
    "InvalidDelivery",
    "InvalidLogValue",
    "Join",
    "NoRouteMatched",
    "Receive",
    "Retry",
    "Route",
    "Sla",
    "StaleRecord",
    "Step",
    "Timeout",
    "Transition",
    "TransitionNotAllowed",
    "Undo",
    "UndoNotPermitted",
    "UnmappedSteps",
    "UnsavedRecord",
    "WorkflowError",
    "WorkflowModel",
    "WorkflowPermissionDenied",
    "deliver",
    "deliver_many",
    "run_work",
]


def __getattr__(name: str) -> Any:
    # Django imports this package while loading apps, before models may be defined.
    if name == "WorkflowModel":
        from .workflow_model import WorkflowModel

        return WorkflowModel
    if name in ("deliver", "deliver_many", "Delivery"):
        from .engine import receiving

        return getattr(receiving, name)
    if name == "run_work":
        from .engine.firing import run_work

        return run_work
    raise AttributeError(f"module 'django_workflow' has no attribute {name!r}")
