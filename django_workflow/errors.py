"""The exceptions a workflow call can raise. Each leaves the row unchanged."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied


class WorkflowError(Exception):
    """Base class of every error raised by a workflow call."""


class TransitionNotAllowed(WorkflowError):
    """The current step offers no transition of that name."""

    def __init__(self, record, name: str, step: str) -> None:
        self.record, self.name, self.step = record, name, step
        super().__init__(
            f"{type(record).__name__} {record.pk}: step {step!r} offers no transition {name!r}."
        )


class StaleRecord(WorkflowError):
    """The database row no longer holds what the instance was loaded with."""

    def __init__(self, record, fields: tuple[str, ...]) -> None:
        self.record, self.fields = record, fields
        super().__init__(
            f"{type(record).__name__} {record.pk} changed in the database since it was "
            f"loaded ({', '.join(fields)}); reload it with refresh_from_db() and try again."
        )


class NoRouteMatched(WorkflowError):
    """No route of a transition (or of ``on_success``) held for the record."""

    def __init__(self, record, name: str, step: str) -> None:
        self.record, self.name, self.step = record, name, step
        super().__init__(
            f"{type(record).__name__} {record.pk}: no route of {name!r} in step {step!r} "
            "matched the record."
        )


class WorkflowPermissionDenied(PermissionDenied, WorkflowError):
    """The actor is not allowed to call this transition."""

    def __init__(self, record, name: str, actor) -> None:
        self.record, self.name, self.actor = record, name, actor
        super().__init__(f"{actor!r} may not call {name!r} on {type(record).__name__} {record.pk}.")


class UndoNotPermitted(WorkflowError):
    """Undo was refused; ``reason`` says why."""

    REASONS = (
        "undo_not_enabled",
        "no_history",
        "not_undoable",
        "window_expired",
        "no_actor",
        "different_actor",
        "effect_ran",
    )

    def __init__(self, reason: str, message: str = "") -> None:
        self.reason = reason
        super().__init__(message or reason)


class DirectStepChange(ValueError, WorkflowError):
    """``save()`` was asked to write a step assigned directly to the state attribute."""

    def __init__(self, record, loaded: str, assigned: str) -> None:
        self.record, self.loaded, self.assigned = record, loaded, assigned
        super().__init__(
            f"{type(record).__name__} {record.pk}: the step was set to {assigned!r} directly "
            f"(it was loaded in {loaded!r}); save() does not write the step. Call a "
            "transition instead, or a migration operation (RenameStep, MoveRecords) to repair rows."
        )


class TimeLimitExceeded(BaseException):
    """An action ran past its step's ``time_limit``.

    A ``BaseException``, like ``SystemExit``, so an action's own ``except
    Exception`` cannot swallow it.
    """
