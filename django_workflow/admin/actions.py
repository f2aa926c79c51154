"""The changelist's transition actions: one per transition, each record moved as its
button would move it, and a message saying what became of each. A selection some of
whose records would move into a final step is confirmed first (``foresee`` tells where
each record would go, or why it would stay)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest

from ..errors import (
    ConditionUnmet,
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowError,
    WorkflowPermissionDenied,
)


def transition_action(workflow: Any, name: str) -> Any:
    """An admin action moving the selected records through ``name``, described as
    Django describes any action (``short_description``), so the admin's own
    ``get_action`` wraps it for every Django version."""

    def action(modeladmin: Any, request: HttpRequest, queryset: Any) -> Any:
        return modeladmin.workflow_bulk_action(request, queryset, name)

    action.__name__ = f"workflow_{name}"
    label = str(workflow.transition_label(name))
    action.short_description = f"{label} selected".replace("%", "%%")
    return action


def asks_values(workflow: Any, name: str) -> bool:
    """Whether a step offers ``name`` with values to type: the changelist cannot ask."""
    return any(
        transition.accept
        for step in workflow.steps
        for transition in workflow.transitions_in(step)
        if transition.name == name
    )


def foresee(record: Any, name: str, actor: Any) -> tuple[str | None, str]:
    """Where ``record`` would go through ``name`` called by ``actor`` (and ``""``), or
    ``None`` and why it would stay; nothing is written."""
    from ..engine import decide  # the runtime, loaded by a request, not with the admin

    try:
        return decide(record, name, actor, {}).target, ""
    except (WorkflowError, TypeError) as error:
        return None, reason_of(error)


def failed(outcome: Any) -> bool:
    return isinstance(outcome, Exception)


def reason_of(error: Exception) -> str:
    if isinstance(error, WorkflowPermissionDenied):
        return "not permitted"
    if isinstance(error, StaleRecord):
        return "changed meanwhile"
    if isinstance(error, ConditionUnmet):  # offered, but its `when` does not hold: say why
        return error.reason[:1].lower() + error.reason[1:].rstrip(".")
    if isinstance(error, TransitionNotAllowed):
        return "not offered in its step"
    if isinstance(error, NoRouteMatched):
        return "no route matched"
    from ..engine import error_summary

    return error_summary(error, 120)


class BulkReport:
    """What a changelist action did: moved records per step, refused ones per reason."""

    #: Records named per reason; the rest are counted.
    NAMED = 5

    def __init__(self, workflow: Any, name: str) -> None:
        self.workflow, self.name = workflow, name
        self.steps: dict[str, int] = {}
        self.reasons: dict[str, list[Any]] = {}

    def moved(self, step: str) -> None:
        self.steps[step] = self.steps.get(step, 0) + 1

    def refused(self, record: Any, reason: str) -> None:
        self.reasons.setdefault(reason, []).append(record)

    def send(self, model_admin: Any, request: HttpRequest) -> None:
        label = self.workflow.transition_label(self.name)
        if self.steps:
            where = ", ".join(
                f"{count} to {self.workflow.step_label(step)}" for step, count in self.steps.items()
            )
            model_admin.message_user(
                request, f"{label}: {sum(self.steps.values())} moved ({where}).", messages.SUCCESS
            )
        for reason, records in self.reasons.items():
            named = ", ".join(str(record) for record in records[: self.NAMED])
            more = len(records) - self.NAMED
            rest = f" and {more} more" if more > 0 else ""
            text = f"{label}: {len(records)} not moved, {reason}: {named}{rest}."
            model_admin.message_user(request, text, messages.WARNING)
