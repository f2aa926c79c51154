"""The changelist's transition actions: one per transition, each record moved as its
button would move it, and a message saying what became of each. A selection some of
whose records would move into a final step is confirmed first (``foresee`` tells where
each record would go, or why it would stay).

Imports the errors, ``display``, ``forms``, ``site`` and ``transitions`` (whose
``get_workflow_transitions`` decides what is offered); the engine inside the functions
that run it, never on import.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin import helpers, options
from django.contrib.admin.options import IS_POPUP_VAR
from django.http import HttpRequest
from django.template.response import TemplateResponse

from ..errors import (
    ConditionUnmet,
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowError,
    WorkflowPermissionDenied,
)
from ..policies import allows_nothing, narrowing
from .display import is_terminal
from .forms import CommentForm, posted_comment
from .site import confirming
from .transitions import WorkflowTransitionViews

#: Where an action is offered (Django 6.1 and later); ``None`` before, when actions were
#: only the changelist's.
CHANGE_LIST = getattr(getattr(options, "ActionLocation", None), "CHANGE_LIST", None)


class WorkflowBulkActions:
    """The ``WorkflowAdminMixin``'s changelist actions: "Close: selected tickets" and the page
    confirming a move of several records into a final step."""

    def get_actions(self, request: HttpRequest, action_location: Any = CHANGE_LIST) -> Any:
        """Django's actions, then one per transition that asks for no value ("Close:
        selected tickets"), for users who may change records: each selected record is moved as
        its button would move it, and the message says what became of each."""
        location = () if action_location is None else (action_location,)
        actions = super().get_actions(request, *location)
        disabled = self.actions is None or IS_POPUP_VAR in request.GET
        if disabled or action_location != CHANGE_LIST or not self.has_change_permission(request):
            return actions
        workflow = self.model.workflow
        for name in workflow.transition_names:
            if not asks_values(workflow, name) and not refused_everywhere(
                workflow, name, request.user
            ):
                action = self.get_action(transition_action(self.model, name), *location)
                actions[f"workflow_{name}"] = action
        return actions

    def workflow_bulk_action(self, request: HttpRequest, queryset: Any, name: str) -> Any:
        """A changelist action: a selection some of whose records would move into a final
        step is confirmed on a page first (posting back ``post=yes``, as Django's "Delete
        selected" does); any other moves at once."""
        confirmed = request.POST.get("post") == "yes"
        comment = posted_comment(request) if confirmed else None
        if comment is not None:
            return self.workflow_bulk_transition(request, queryset, name, comment=comment)
        hidden = set(self._hidden_from(request, queryset, name))

        def outlook(record: Any) -> tuple[str | None, str]:
            return (
                (None, "not offered here")
                if record.pk in hidden
                else foresee(record, name, request.user)
            )

        forecast = [(record, *outlook(record)) for record in queryset]
        workflow = self.model.workflow
        final = any(target and is_terminal(workflow, target) for _, target, _ in forecast)
        if not (final or confirmed):  # confirmed: its comment could not be kept, asked again
            return self.workflow_bulk_transition(request, queryset, name)
        return self._bulk_confirmation(request, name, forecast)

    def _bulk_confirmation(self, request: HttpRequest, name: str, forecast: list[Any]) -> Any:
        workflow = self.model.workflow
        label = workflow.transition_label(name)
        moving = [
            {"record": r, "to": workflow.step_label(t), "final": is_terminal(workflow, t)}
            for r, t, _ in forecast
            if t
        ]
        staying = [{"record": r, "reason": why} for r, t, why in forecast if not t]
        context = {
            **confirming(self, request, f"{label}: confirm"),
            "transition_label": label,
            "moving": moving,
            "staying": staying,
            "final_steps": sorted({m["to"] for m in moving if m["final"]}, key=str),
            "selected": [r.pk for r, _, _ in forecast],
            "action": f"workflow_{name}",
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "comment_form": CommentForm(request.POST if request.POST.get("post") else None),
            "back_url": request.get_full_path(),
        }
        return TemplateResponse(request, "admin/django_workflow/bulk_confirmation.html", context)

    def workflow_bulk_transition(
        self, request: HttpRequest, queryset: Any, name: str, comment: str = ""
    ) -> None:
        """Move the selected records through ``name`` as the logged-in user; report outcomes."""
        hidden = self._hidden_from(request, queryset, name)
        outcomes = queryset.exclude(pk__in=hidden).transition(
            name, actor=request.user, comment=comment
        )
        report = BulkReport(self.model.workflow, name)
        for record in queryset.filter(pk__in=hidden):
            report.refused(record, "not offered here")
        for record in queryset.filter(pk__in=[pk for pk, o in outcomes.items() if failed(o)]):
            report.refused(record, reason_of(outcomes[record.pk]))
        for outcome in outcomes.values():
            if not failed(outcome):
                report.moved(outcome)
        report.send(self, request)

    def _hidden_from(self, request: HttpRequest, queryset: Any, name: str) -> list[Any]:
        """The records whose ``get_workflow_transitions`` leaves ``name`` out, when a
        project overrides it (the default offers what the policy allows: the call checks)."""
        default = WorkflowTransitionViews.get_workflow_transitions
        if type(self).get_workflow_transitions is default:
            return []
        return [r.pk for r in queryset if name not in self.get_workflow_transitions(request, r)]


def transition_action(model: Any, name: str) -> Any:
    """An admin action moving the selected records through ``name``, described as
    Django describes any action (``short_description``), so the admin's own
    ``get_action`` wraps it for every Django version: "Make an offer: selected
    candidates" (a label is a verb phrase, which "selected" cannot follow)."""

    def action(modeladmin: Any, request: HttpRequest, queryset: Any) -> Any:
        return modeladmin.workflow_bulk_action(request, queryset, name)

    action.__name__ = f"workflow_{name}"
    label = str(model.workflow.transition_label(name))
    plural = model._meta.verbose_name_plural
    action.short_description = f"{label}: selected {plural}".replace("%", "%%")
    return action


def refused_everywhere(workflow: Any, name: str, actor: Any) -> bool:
    """Whether the policies of every step offering ``name`` refuse ``actor`` whatever the
    record (a permission they lack): the changelist offers them no such action."""
    policies = [
        workflow.policy_for(step, name)
        for step in workflow.steps
        if workflow.transition(step, name) is not None
    ]
    return all(allows_nothing(narrowing(policy, actor).q) for policy in policies)


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
    from ..engine import (
        decide,  # the runtime, loaded by a request, not with the admin
    )

    try:
        return decide(record, name, actor, {}).target, ""
    except (WorkflowError, TypeError) as error:
        return None, reason_of(error)


def failed(outcome: Any) -> bool:
    return isinstance(outcome, Exception)


def reason_of(error: Exception) -> str:
    if isinstance(error, WorkflowPermissionDenied) and error.claimed:
        return f"{error.holder} holds it" if error.holder else "nobody holds it: claim it first"
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
    from ..errors import error_summary

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
