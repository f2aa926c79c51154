"""What the REST endpoints answer: a record's workflow state, and why a call was refused.

The serializers only describe and render; ``viewset`` builds the values. The error
answers are described here too, for the OpenAPI schema of both actions.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class _BlankAsNull(serializers.CharField):
    """A text column where empty means "none": read as ``null``."""

    def to_representation(self, value: Any) -> str | None:
        return None if value in ("", None) else str(value)


class WorkflowActionSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The transition's name: POST to transitions/{name}/.")
    label = serializers.CharField(help_text="How the transition reads.")
    accept = serializers.ListField(
        child=serializers.CharField(), help_text="The field names its request body takes."
    )


class WorkflowDeadlineSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField(help_text="How the deadline reads: its label, else its name.")
    kind = serializers.CharField(help_text='"action", "transition", "every" or "sla".')
    due_at = serializers.DateTimeField()
    target = serializers.CharField(
        help_text="The action it runs, or the step it moves to; an SLA alarm's method or "
        "transition."
    )


class WorkflowHistoryRowSerializer(serializers.Serializer):
    occurred_at = serializers.DateTimeField()
    from_step = _BlankAsNull(
        source="from_state", allow_null=True, help_text="null on the row of creation."
    )
    to_step = serializers.CharField(source="to_state")
    transition = serializers.CharField(
        source="transition_name", help_text="The transition, action, deadline or undo."
    )
    trigger = serializers.CharField(
        source="triggered_by",
        help_text="initial, manual, automatic, timeout, error_path, failed, halted, undo, "
        "migration or vote.",
    )
    actor_repr = serializers.CharField(help_text="Who acted, as text; empty for nobody.")
    comment = serializers.CharField()
    data = serializers.JSONField(allow_null=True)


class WorkflowVotesSerializer(serializers.Serializer):
    transition = serializers.CharField(help_text="A `quorum` transition of the current step.")
    label = serializers.CharField(help_text="How the transition reads.")
    quorum = serializers.IntegerField(help_text="How many different actors it needs.")
    voters = serializers.ListField(
        child=serializers.CharField(),
        help_text="Who voted for it while the record has been in this step, oldest first.",
    )


class WorkflowStateSerializer(serializers.Serializer):
    """Where a record stands: the answer of both endpoints."""

    step = serializers.CharField(help_text="The current step's name.")
    label = serializers.CharField(help_text="The current step's label.")
    version = serializers.IntegerField(
        allow_null=True,
        help_text="The version of the declaration the record runs on; null on a model "
        "without versions.",
    )
    available_actions = WorkflowActionSerializer(
        many=True, help_text="The transitions the requester may call now."
    )
    pending_deadlines = WorkflowDeadlineSerializer(
        many=True, help_text="The current step's deadlines that will fire, soonest first."
    )
    history = WorkflowHistoryRowSerializer(
        many=True, help_text="The newest transition log rows, newest first."
    )
    votes = WorkflowVotesSerializer(
        many=True, help_text="The votes cast for each `quorum` transition of the current step."
    )


class WorkflowErrorSerializer(serializers.Serializer):
    """Why a transition was refused; the record is unchanged."""

    transition = serializers.CharField(help_text="The transition named in the URL.")
    error = serializers.CharField(
        help_text="invalid, parse_error, not_authenticated, authentication_failed, "
        "permission_denied, not_found, unknown_transition, method_not_allowed, "
        "transition_not_allowed, already_voted, condition_unmet, stale_record or "
        "no_route_matched "
        "(see docs/rest.md); DRF's own codes for what it refuses itself (throttled…)."
    )
    detail = serializers.CharField(help_text="The reason, in words.")
    step = serializers.CharField(
        required=False,
        help_text="The record's current step (as stored now), when the record was found.",
    )
    reason = serializers.CharField(
        required=False,
        help_text="condition_unmet: why the transition's condition does not hold, in words.",
    )
    fields = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="stale_record: the columns compared with the stored row.",
    )
    errors = serializers.DictField(
        required=False, help_text="invalid: the messages per field of the request body."
    )


class WorkflowStateErrorSerializer(serializers.Serializer):
    """Why ``GET …/workflow/`` was refused: DRF's own answer."""

    detail = serializers.CharField(help_text="The reason, in words.")


# The refusals, as the OpenAPI schema describes them ------------------------------------

_UNAUTHENTICATED = (
    "not_authenticated: no credentials; authentication_failed: wrong credentials. 401 "
    "with WWW-Authenticate when an authentication class names a scheme (Basic, Token…)"
)
TRANSITION_ERRORS = {
    code: OpenApiResponse(WorkflowErrorSerializer, description=text)
    for code, text in {
        400: "invalid: the request body failed validation (see errors); parse_error: the "
        "body is not JSON, or nests too deep to read.",
        401: f"{_UNAUTHENTICATED}.",
        403: "permission_denied: the viewset's permissions or the workflow's policy refused "
        "the requester; not_authenticated / authentication_failed when no authentication "
        "class names a scheme (SessionAuthentication alone).",
        404: "not_found: no such record for the requester; unknown_transition: the "
        "workflow declares no such transition.",
        409: "transition_not_allowed: the current step offers no such transition; "
        "condition_unmet: the step offers it, but its condition does not hold (see reason); "
        "stale_record: the record changed meanwhile, read it again.",
        422: "no_route_matched: no route of the transition held for the record.",
    }.items()
}
STATE_ERRORS = {
    code: OpenApiResponse(WorkflowStateErrorSerializer, description=text)
    for code, text in {
        401: f"{_UNAUTHENTICATED}.",
        403: "The viewset's permissions refused the requester (or no credentials, when no "
        "authentication class names a scheme).",
        404: "No such record for the requester.",
    }.items()
}
