"""The REST actions of a workflow viewset: ``GET …/{pk}/workflow/`` shows where a record
stands, ``POST …/{pk}/transitions/{transition}/`` runs a transition.

A transition call goes: the record through the viewset's ``get_object()``, the
transition its step declares, the body through that transition's serializer, then
``record.transition()``. Each refusal on the way is a JSON answer naming the
transition, the reason and the step; the record is unchanged.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ..errors import (
    AlreadyVoted,
    ConditionUnmet,
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
    staff_text,
)
from ..model.versions import workflow_of
from .answers import STATE_ERRORS, TRANSITION_ERRORS, WorkflowStateSerializer
from .bodies import WorkflowCallSerializer, transition_serializer

_WORKFLOW_ACTIONS = ("workflow", "workflow_transition")


def _body(request: Request) -> Any:
    """The parsed body; JSON nested deeper than the parser can follow is a parse error."""
    try:
        return request.data
    except RecursionError:
        raise exceptions.ParseError("JSON parse error - nested too deep.") from None


def _stored_step(record: Any) -> str | None:
    """The record's step as stored now (``None`` when the row is gone)."""
    attribute = workflow_of(record).state_attribute
    rows = type(record)._base_manager.using(record._state.db).filter(pk=record.pk)
    return rows.values_list(attribute, flat=True).first()


def _actor(request: Request) -> Any:
    """The requester as the workflow's actor: nobody when not authenticated."""
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


def _votes(record: Any) -> list[dict[str, Any]]:
    """Per ``quorum`` transition of the record's step, who voted for it in this stay."""
    from ..engine import votes

    found = []
    for transition in workflow_of(record).transitions_in(record.workflow.current_step):
        needed = votes.quorum(transition)
        if needed is not None:
            voters = [str(voter) for voter in votes.voters(record, transition.name)]
            found.append(
                {
                    "transition": transition.name,
                    "label": str(transition.title),
                    "quorum": needed,
                    "voters": voters,
                }
            )
    return found


class _Refused(Exception):
    """A transition call refused: the answer's status, error code, detail and extra keys."""

    def __init__(self, http_status: int, error: str, detail: Any, **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail, self.extra = http_status, error, detail, extra


def _declared(record: Any, name: str, step: str) -> Any:
    """The transition ``name`` as ``step`` declares it; refused when the workflow
    declares no such transition, or the step offers none of that name."""
    workflow = workflow_of(record)
    if name not in workflow.transition_names:
        raise _Refused(
            status.HTTP_404_NOT_FOUND,
            "unknown_transition",
            f"{type(record).__name__} declares no transition {name!r}.",
            step=step,
        )
    declared = workflow.transition(step, name)
    if declared is None:
        error = TransitionNotAllowed(record, name, step)
        raise _Refused(status.HTTP_409_CONFLICT, "transition_not_allowed", error, step=step)
    return declared


def _run(record: Any, name: str, actor: Any, values: dict[str, Any], step: str) -> None:
    """Run transition ``name`` with the validated ``values``; what the workflow refuses
    becomes a ``_Refused``."""
    comment = values.pop("comment", "")
    data = values.pop("data", None)
    try:
        record.workflow.transition(name, actor=actor, comment=comment, data=data, **values)
    except WorkflowPermissionDenied as error:
        raise _Refused(status.HTTP_403_FORBIDDEN, "permission_denied", error, step=step) from None
    except AlreadyVoted as error:
        raise _Refused(status.HTTP_409_CONFLICT, "already_voted", error, step=step) from None
    except ConditionUnmet as error:
        raise _Refused(
            status.HTTP_409_CONFLICT, "condition_unmet", error, step=step, reason=error.reason
        ) from None
    except TransitionNotAllowed as error:
        raise _Refused(
            status.HTTP_409_CONFLICT, "transition_not_allowed", error, step=step
        ) from None
    except StaleRecord as error:
        stored = _stored_step(record)
        raise _Refused(
            status.HTTP_409_CONFLICT,
            "stale_record",
            error,
            **({} if stored is None else {"step": stored}),  # gone: no step
            fields=list(error.fields),
        ) from None
    except NoRouteMatched as error:
        raise _Refused(
            status.HTTP_422_UNPROCESSABLE_ENTITY, "no_route_matched", error, step=step
        ) from None


class WorkflowViewSetMixin:
    """Add to a DRF ``ModelViewSet`` of a workflow model (before the viewset class).

    ``GET …/{pk}/workflow/`` shows the record's workflow state;
    ``POST …/{pk}/transitions/{transition}/`` runs a transition. Both load the
    record with ``get_object()``, so the viewset's queryset, filters and
    permission classes apply.
    """

    #: How many transition log rows the state shows, newest first.
    workflow_history_limit = 20
    #: The workflow model, for the OpenAPI schema, when neither ``queryset`` nor
    #: ``serializer_class`` names it.
    workflow_model: Any = None

    @extend_schema(
        summary="The record's workflow state",
        description="Its step, the transitions the requester may call, its pending "
        "deadlines and its newest history rows.",
        request=None,
        responses={200: WorkflowStateSerializer, **STATE_ERRORS},
    )
    @action(detail=True, methods=["get"], url_path="workflow", url_name="workflow")
    def workflow(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        record = self.get_object()
        return Response(self.get_workflow_state(record))

    @extend_schema(
        summary="Run a transition",
        description="The body carries the values the transition accepts, plus an "
        "optional comment and data, both stored on the transition log row. "
        "Answers with the record's new workflow state; on an error the record is "
        "unchanged.",
        request=WorkflowCallSerializer,  # each viewset's own bodies: WorkflowViewSetSchema
        parameters=[
            OpenApiParameter(
                "transition", str, OpenApiParameter.PATH, description="The transition's name."
            )
        ],
        responses={
            200: OpenApiResponse(
                WorkflowStateSerializer, description="The record's workflow state after the call."
            ),
            **TRANSITION_ERRORS,
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"transitions/(?P<transition>[^/.]+)",
        url_name="workflow-transition",
    )
    def workflow_transition(
        self, request: Request, *args: Any, transition: str, **kwargs: Any
    ) -> Response:
        record = self.get_object()
        step = record.workflow.current_step  # what a refusal names: the step the call found
        try:
            declared = _declared(record, transition, step)
            values = self._transition_values(record, declared, request, step)
            _run(record, transition, _actor(request), values, step)
        except _Refused as refused:
            return self._workflow_error(
                refused.status, transition, refused.error, refused.detail, **refused.extra
            )
        record.refresh_from_db()  # what is stored now (an automatic step may have run on)
        return Response(self.get_workflow_state(record))

    def _transition_values(
        self, record: Any, declared: Any, request: Request, step: str
    ) -> dict[str, Any]:
        """The request body, validated by the transition's serializer."""
        serializer_class = self.get_workflow_transition_serializer_class(record, declared)
        serializer = serializer_class(
            instance=record, data=_body(request), context=self.get_serializer_context()
        )
        if not serializer.is_valid():
            raise _Refused(
                status.HTTP_400_BAD_REQUEST,
                "invalid",
                "The request body is not valid for this transition.",
                step=step,
                errors=serializer.errors,
            )
        return dict(serializer.validated_data)

    # Hooks ----------------------------------------------------------------------------

    def get_workflow_state(self, record: Any) -> Any:
        """The workflow state of ``record`` for the requester, as both endpoints answer."""
        workflow = workflow_of(record)
        step = record.workflow.current_step
        actions = []
        for name in record.workflow.available_actions(_actor(self.request)):
            declared = workflow.transition(step, name)
            actions.append(
                {
                    "name": name,
                    "label": str(workflow.transition_label(name, step)),
                    "accept": list(declared.accept) if declared else [],
                }
            )
        newest = record.workflow.history().order_by("-occurred_at", "-id")
        history = newest[: self.workflow_history_limit]
        state = {
            "step": step,
            "label": str(workflow.step_label(step)),
            "version": record.workflow.version,
            "available_actions": actions,
            "pending_deadlines": record.workflow.pending_deadlines(),
            "history": list(history),
            "votes": _votes(record),
        }
        return WorkflowStateSerializer(state, context=self.get_serializer_context()).data

    def get_workflow_transition_serializer_class(
        self, record: Any, transition: Any
    ) -> type[serializers.Serializer]:
        """The serializer of the request body of ``transition`` (as the current step
        declares it); override to customise it."""
        return transition_serializer(type(record), transition.name, tuple(transition.accept))

    # Errors ---------------------------------------------------------------------------

    def _workflow_error(
        self, code: int, transition: str, error: str, detail: Any, **extra: Any
    ) -> Response:
        return Response(
            {"transition": transition, "error": error, "detail": staff_text(detail), **extra},
            status=code,
        )

    def get_authenticate_header(self, request: Request) -> str | None:
        """On the workflow endpoints, the scheme of the first authentication class that
        names one: a missing or wrong password answers 401 even when
        ``SessionAuthentication`` comes first (DRF asks the first class only, and
        answers 403 when it names none). The viewset's other routes keep DRF's rule."""
        if getattr(self, "action", None) not in _WORKFLOW_ACTIONS:
            return super().get_authenticate_header(request)
        for authenticator in self.get_authenticators():
            header = authenticator.authenticate_header(request)
            if header:
                return header
        return None

    def handle_exception(self, exc: Exception) -> Response:
        """DRF's answer to an error (no such record, permissions, throttling…), naming the
        transition when one was asked for."""
        response = super().handle_exception(exc)
        transition = getattr(self, "kwargs", {}).get("transition")
        data = response.data
        if (
            "workflow_transition" in getattr(self, "action_map", {}).values()  # GET too: 405
            and transition is not None
            and isinstance(data, dict)
            and "detail" in data
            and "transition" not in data
        ):
            detail = data["detail"]
            response.data = {
                "transition": transition,
                "error": getattr(detail, "code", None) or "error",
                "detail": str(detail),
            }
        return response
