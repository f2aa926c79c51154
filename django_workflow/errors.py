"""The exceptions a workflow call can raise. Each leaves the row unchanged.

An error's message (``str(error)``) is for developers: it names the record by
model label and key, steps and transitions by the names in the code, with a
label after a name where the label says more (``step 'held' (“On hold”)``).
``staff_text(error)`` says the same with labels only, for the admin, the
template tags and REST's ``detail``. Code reads the names from the attributes
(``.step``, ``.transition``, ``.fields``…).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.utils.text import capfirst


class WorkflowError(Exception):
    """Base class of every error raised by a workflow call."""

    #: The message with labels only, for staff (``staff_text``); ``None``: the message.
    staff_message: str | None = None

    def _say(self, sentence: Callable[[Naming], str]) -> None:
        """Set the message (for developers) and the staff message from one sentence."""
        self.staff_message = sentence(LABELS)
        super().__init__(sentence(IDENTIFIERS))


def staff_text(error: BaseException) -> str:
    """What staff read of ``error``: its message with labels, not the code's names."""
    return getattr(error, "staff_message", None) or str(error)


class TransitionNotAllowed(WorkflowError):
    """The current step offers no transition of that name."""

    def __init__(
        self, record, name: str, step: str, message: str = "", staff_message: str = ""
    ) -> None:
        self.record, self.name, self.step = record, name, step
        self.transition = name
        if message:
            self.staff_message = staff_message or None
            super().__init__(message)
            return
        self._say(
            lambda n: (
                f"{n.record(record)}: {n.step(record, step)} offers no "
                f"{n.transition(record, name, step)}."
            )
        )


class ConditionUnmet(TransitionNotAllowed):
    """The current step offers the transition, but its ``when`` does not hold.

    ``reason`` says why, for people: the transition's ``unmet`` text, else the
    condition's own description (see docs/transitions.md).
    """

    def __init__(self, record, name: str, step: str, reason: str) -> None:
        self.reason = reason
        self.record, self.name, self.step, self.transition = record, name, step, name
        self._say(
            lambda n: (
                f"{n.record(record)}: {n.transition(record, name, step)} is not "
                f"possible now. {reason}"
            )
        )


class AlreadyVoted(TransitionNotAllowed):
    """The actor already voted for this ``quorum`` transition in the record's current stay
    in the step; their vote counts once (``record.retract()`` withdraws it)."""

    def __init__(self, record, name: str, step: str, actor) -> None:
        self.actor = actor
        self.record, self.name, self.step, self.transition = record, name, step, name
        self._say(
            lambda n: (
                f"{n.record(record)}: {actor} already voted for "
                f"{n.transition(record, name, step)} while it is in {n.step(record, step)}; "
                "a vote counts once."
            )
        )


class AlreadyClaimed(TransitionNotAllowed):
    """Someone holds the record already (``record.claim()``): ``holder`` is who. Of
    concurrent claims exactly one wins; the others raise this."""

    def __init__(self, record, step: str, actor, holder) -> None:
        self.actor, self.holder = actor, holder
        who = "You hold it already" if _same_user(actor, holder) else f"{holder} holds it"
        self.record, self.name, self.step, self.transition = record, "claim", step, "claim"
        self._say(lambda n: f"{n.record(record)} cannot be claimed by {actor}: {who}.")


class UnsavedRecord(ValueError, WorkflowError):
    """A transition was called on an instance that is not saved yet (no database row)."""

    def __init__(self, record, name: str) -> None:
        self.record, self.name, self.transition = record, name, name
        self._say(
            lambda n: (
                f"This {n.model(record)} is not saved: {n.transition(record, name)} "
                "moves a stored record. Save it first (objects.create() or save()), then call "
                "the transition."
            )
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
        self._say(
            lambda n: (
                f"{n.record(record)} changed in the database since it was loaded "
                f"({', '.join(n.field(record, name) for name in fields)}); reload it with "
                "refresh_from_db() and try again."
            )
        )


class NoRouteMatched(WorkflowError):
    """No route of a transition (or of ``on_success``) held for the record."""

    def __init__(self, record, name: str, step: str) -> None:
        self.record, self.name, self.step = record, name, step
        self.transition = name
        declared = record.workflow.steps.get(step)
        if declared is not None and getattr(declared, "action", None) == name:
            # an automatic step's routes (on_success), named after the step and its action
            self._say(
                lambda n: (
                    f"{n.record(record)}: no route of {n.step(record, step)} holds for "
                    f"the record after {n.action(name)}."
                )
            )
            return
        self._say(
            lambda n: (
                f"{n.record(record)}: no route of {n.transition(record, name, step)} in "
                f"{n.step(record, step)} holds for the record."
            )
        )


class WorkflowPermissionDenied(PermissionDenied, WorkflowError):
    """The actor is not allowed to call this transition. In a ``Step(claim=True)``,
    ``holder`` is who holds the record (``None``: nobody, it must be claimed first)."""

    def __init__(self, record, name: str, actor, *, claimed: bool = False, holder=None) -> None:
        self.record, self.name, self.actor = record, name, actor
        self.transition, self.holder, self.claimed = name, holder, claimed
        who = "A call without an actor" if actor is None else str(actor)
        tail = ""
        if claimed and holder is None:
            tail = ": nobody holds it; claim it first"
        elif claimed:
            tail = f": {holder} holds it"
        self._say(
            lambda n: (
                f"{who} may not call {n.transition(record, name)} on {n.record(record)}{tail}."
            )
        )


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
        "joined",
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
            f"{record._meta.label} {record.pk}: the step was set to {assigned!r} directly "
            f"(it was loaded in {loaded!r}); save() does not write the step. Call a "
            "transition instead, or a migration operation (RenameStep, MoveRecords) to repair rows."
        )


class UnmappedSteps(ValueError, WorkflowError):
    """An upgrade to another version found records in steps the target version lacks and
    the call maps nowhere; nothing moved. ``unmapped``: ``{(version, step): records}``."""

    def __init__(self, model: Any, to: int, unmapped: dict[tuple[int, str], int]) -> None:
        self.model, self.to, self.unmapped = model, to, unmapped
        listed = "; ".join(
            f"{step!r} of version {version} ({count} record{'s' * (count != 1)})"
            for (version, step), count in sorted(unmapped.items())
        )
        super().__init__(
            f"{model._meta.label}: version {to} has no step {listed}. Map each to a step "
            f"of version {to} (steps={{'old': 'new'}}, or --map old=new); nothing moved."
        )


class TimeLimitExceeded(BaseException):
    """An action ran past its step's ``time_limit``.

    A ``BaseException``, like ``SystemExit``, so an action's own ``except
    Exception`` cannot swallow it.
    """


# How messages name things -----------------------------------------------------------


class Naming:
    """How a message names a record, a step, a transition and a field: by the code's
    names (``IDENTIFIERS``, for developers) or by labels (``LABELS``, for staff)."""

    def __init__(self, for_staff: bool) -> None:
        self.for_staff = for_staff

    def model(self, record: Any) -> str:
        return str(record._meta.verbose_name) if self.for_staff else record._meta.label

    def record(self, record: Any) -> str:
        """``Expense claim 7`` for staff, ``testapp.Expense 7`` for developers."""
        if self.for_staff:
            return f"{capfirst(record._meta.verbose_name)} {record.pk}"
        return f"{record._meta.label} {record.pk}"

    def step(self, record: Any, step: str) -> str:
        label = str(record.workflow.step_label(step))
        return label if self.for_staff else _named("step", step, label)

    def transition(self, record: Any, name: str, step: str | None = None) -> str:
        label = str(record.workflow.transition_label(name, step))
        return f"“{label}”" if self.for_staff else _named("transition", name, label)

    def action(self, name: str) -> str:
        """An automatic step's action: ``action 'run_screening'`` (staff: its words)."""
        return capfirst(name.replace("_", " ")) if self.for_staff else f"action {name!r}"

    def field(self, record: Any, attname: str) -> str:
        """A column by its field's verbose name for staff (``owner`` for ``owner_id``)."""
        if not self.for_staff:
            return attname
        try:
            field = record._meta.get_field(attname)
        except FieldDoesNotExist:
            field = next((f for f in record._meta.concrete_fields if f.attname == attname), None)
        return str(field.verbose_name) if field is not None else attname


IDENTIFIERS = Naming(for_staff=False)
LABELS = Naming(for_staff=True)


def _named(kind: str, name: str, label: str) -> str:
    """``step 'held' (“On hold”)``: the label only where it is more than the name."""
    said = f"{kind} {name!r}"
    return said if label == capfirst(name.replace("_", " ")) else f"{said} (“{label}”)"


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
