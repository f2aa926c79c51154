"""The exceptions a workflow call can raise. Each leaves the row unchanged.

Messages are for people: they name the record, steps and transitions by their
labels. Code reads the internal names from the attributes (``.step``,
``.transition``, ``.fields``…).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.utils.text import capfirst


class WorkflowError(Exception):
    """Base class of every error raised by a workflow call."""


class TransitionNotAllowed(WorkflowError):
    """The current step offers no transition of that name."""

    def __init__(self, record, name: str, step: str, message: str = "") -> None:
        self.record, self.name, self.step = record, name, step
        self.transition = name
        super().__init__(
            message
            or f"{_record(record)}: {_step(record, step)} offers no "
            f"“{_transition(record, name, step)}”."
        )


class ConditionUnmet(TransitionNotAllowed):
    """The current step offers the transition, but its ``when`` does not hold.

    ``reason`` says why, for people: the transition's ``unmet`` text, else the
    condition's own description (see docs/transitions.md).
    """

    def __init__(self, record, name: str, step: str, reason: str) -> None:
        self.reason = reason
        label = _transition(record, name, step)
        message = f"{_record(record)}: “{label}” is not possible now. {reason}"
        super().__init__(record, name, step, message)


class AlreadyVoted(TransitionNotAllowed):
    """The actor already voted for this ``quorum`` transition in the record's current stay
    in the step; their vote counts once (``record.retract()`` withdraws it)."""

    def __init__(self, record, name: str, step: str, actor) -> None:
        self.actor = actor
        label = _transition(record, name, step)
        message = (
            f"{_record(record)}: {actor} already voted for “{label}” while it is in "
            f"{_step(record, step)}; a vote counts once."
        )
        super().__init__(record, name, step, message)


class AlreadyClaimed(TransitionNotAllowed):
    """Someone holds the record already (``record.claim()``): ``holder`` is who. Of
    concurrent claims exactly one wins; the others raise this."""

    def __init__(self, record, step: str, actor, holder) -> None:
        self.actor, self.holder = actor, holder
        who = "You hold it already" if _same_user(actor, holder) else f"{holder} holds it"
        message = f"{_record(record)} cannot be claimed by {actor}: {who}."
        super().__init__(record, "claim", step, message)


class UnsavedRecord(ValueError, WorkflowError):
    """A transition was called on an instance that is not saved yet (no database row)."""

    def __init__(self, record, name: str) -> None:
        self.record, self.name, self.transition = record, name, name
        super().__init__(
            f"This {record._meta.verbose_name} is not saved: “{_transition(record, name)}” "
            "moves a stored record. Save it first (objects.create() or save()), then call "
            "the transition."
        )


class InvalidLogValue(ValueError, WorkflowError):
    """A call's ``comment`` or ``data`` cannot be stored on the log row and read back."""

    def __init__(self, argument: str, problem: str) -> None:
        self.argument, self.problem = argument, problem
        super().__init__(f"The call's {argument} {problem}")


class StaleRecord(WorkflowError):
    """The database row no longer holds what the instance was loaded with."""

    def __init__(self, record, fields: tuple[str, ...]) -> None:
        self.record, self.fields = record, fields
        read = ", ".join(_field(record, name) for name in fields)
        super().__init__(
            f"{_record(record)} changed in the database since it was loaded ({read}); "
            "reload it with refresh_from_db() and try again."
        )


class NoRouteMatched(WorkflowError):
    """No route of a transition (or of ``on_success``) held for the record."""

    def __init__(self, record, name: str, step: str) -> None:
        self.record, self.name, self.step = record, name, step
        self.transition = name
        super().__init__(
            f"{_record(record)}: no route of “{_transition(record, name, step)}” in "
            f"{_step(record, step)} holds for the record."
        )


class WorkflowPermissionDenied(PermissionDenied, WorkflowError):
    """The actor is not allowed to call this transition. In a ``Step(claim=True)``,
    ``holder`` is who holds the record (``None``: nobody, it must be claimed first)."""

    def __init__(self, record, name: str, actor, *, claimed: bool = False, holder=None) -> None:
        self.record, self.name, self.actor = record, name, actor
        self.transition, self.holder = name, holder
        who = "A call without an actor" if actor is None else str(actor)
        message = f"{who} may not call “{_transition(record, name)}” on {_record(record)}"
        if claimed and holder is None:
            message += ": nobody holds it; claim it first"
        elif claimed:
            message += f": {holder} holds it"
        super().__init__(message + ".")


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
        "cascaded",
    )

    def __init__(self, reason: str, message: str = "") -> None:
        self.reason = reason
        super().__init__(message or reason)


class InvalidDelivery(ValueError, WorkflowError):
    """An event delivered from outside that cannot be read: an event name no workflow
    receives, a key its field cannot hold, or ``id``, ``seq`` or ``data`` of the wrong
    kind. Nothing is stored."""


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


# How messages name things -----------------------------------------------------------


def _record(record: Any) -> str:
    """``Expense claim 7``: the model's verbose name and the key."""
    return f"{capfirst(record._meta.verbose_name)} {record.pk}"


def _step(record: Any, step: str) -> str:
    return str(type(record).workflow.step_label(step))


def _transition(record: Any, name: str, step: str | None = None) -> str:
    return str(type(record).workflow.transition_label(name, step))


def _field(record: Any, attname: str) -> str:
    """A column by its field's verbose name (``owner`` for ``owner_id``)."""
    try:
        field = record._meta.get_field(attname)
    except FieldDoesNotExist:
        field = next((f for f in record._meta.concrete_fields if f.attname == attname), None)
    return str(field.verbose_name) if field is not None else attname


def _same_user(actor: Any, holder: Any) -> bool:
    return actor is not None and getattr(actor, "pk", None) == getattr(holder, "pk", object())


def error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def error_summary(error: BaseException, limit: int = 300) -> str:
    """The exception's class and the first line of its message, for a log line."""
    lines = str(error).strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > limit:
        first = first[: limit - 1] + "…"
    return f"{type(error).__name__}: {first}" if first else type(error).__name__
