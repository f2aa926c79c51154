"""Django REST framework endpoints for a workflow model (``pip install "dj-workflow[rest]"``).

``WorkflowViewSetMixin`` adds two actions to a ``ModelViewSet`` of a
workflow model:

- ``GET …/{pk}/workflow/``: the record's step, what the requester may call,
  its pending deadlines and its recent history;
- ``POST …/{pk}/transitions/{transition}/``: run a transition with the
  values it accepts, a ``comment`` and ``data``; answers with the new state.

Both go through the viewset's own ``get_object()``, so its queryset and its
permission classes apply; a transition also needs the workflow's policy.
Errors are JSON naming the transition and the reason (see docs/rest.md).

The rest of the package never imports this module: Django REST framework and
drf-spectacular are needed only by projects that use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.serializers import PolymorphicProxySerializerExtension
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from . import log_values
from .errors import (
    AlreadyVoted,
    ConditionUnmet,
    InvalidLogValue,
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)

__all__ = [
    "WorkflowCallSerializer",
    "WorkflowErrorSerializer",
    "WorkflowModelPermissions",
    "WorkflowStateSerializer",
    "WorkflowTransitionSerializer",
    "WorkflowViewSetMixin",
    "transition_serializer",
]


# What the endpoints answer ----------------------------------------------------------


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
    kind = serializers.CharField(help_text='"action", "transition" or "every".')
    due_at = serializers.DateTimeField()
    target = serializers.CharField(help_text="The action it runs, or the step it moves to.")


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


# What a transition takes ------------------------------------------------------------


class _Text(serializers.CharField):
    """Text only: a number or a boolean is refused, not stored as its ``str()``. NUL and
    lone surrogates are refused by ``CharField``'s own validators."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class _LogData(serializers.JSONField):
    """JSON that every database stores on the log row and reads back (see
    ``django_workflow.log_values``): valid Unicode, no NUL, bounded depth and size."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            log_values.check_data(data)
        except InvalidLogValue as error:
            raise serializers.ValidationError(str(error)) from None
        return super().to_internal_value(data)


def _comment() -> serializers.Field:
    return _Text(required=False, allow_blank=True, help_text="Why, stored on the log row.")


def _data() -> serializers.Field:
    return _LogData(
        required=False,
        allow_null=True,
        help_text=f"Any JSON value, stored on the log row: text without NUL, at most "
        f"{log_values.MAX_DATA_DEPTH} levels deep and {log_values.MAX_DATA_BYTES} bytes.",
    )


class WorkflowCallSerializer(serializers.Serializer):
    """What every transition's body may carry, beside the values the transition accepts."""

    comment = _comment()
    data = _data()


class WorkflowTransitionSerializer(serializers.ModelSerializer):
    """Base of the request body of a transition: its accepted fields, ``comment``, ``data``.

    Every accepted value is required (a boolean excepted), and may be neither
    null nor blank: a transition that accepts a value needs it, like the
    admin's form. A key the transition does not accept is refused.
    """

    comment = _comment()
    data = _data()

    class Meta:
        fields = ["comment", "data"]
        accept: tuple[str, ...] = ()

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for name in self.Meta.accept:
            field = fields[name]
            if isinstance(field, serializers.BooleanField) or field.read_only:
                continue
            field.required = True
            field.allow_null = False
            if hasattr(field, "allow_blank"):
                field.allow_blank = False
        return fields

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                accepted = [*self.Meta.accept, "comment", "data"]
                raise serializers.ValidationError(
                    {name: [f"Not accepted here; the body takes {accepted}."] for name in unknown}
                )
        return super().to_internal_value(data)


@cache
def transition_serializer(
    model: Any, name: str, accept: tuple[str, ...]
) -> type[WorkflowTransitionSerializer]:
    """The request body of transition ``name`` of ``model`` accepting ``accept``.

    One class per model, transition and accepted fields, named for the OpenAPI
    component: ``DecisionApproveTransition``.
    """
    meta = type(
        "Meta",
        (WorkflowTransitionSerializer.Meta,),
        {"model": model, "fields": [*accept, "comment", "data"], "accept": accept},
    )
    class_name = f"{model.__name__}{_camel(name)}{_variant(model, name, accept)}Transition"
    return type(
        f"{class_name}Serializer",
        (WorkflowTransitionSerializer,),
        {
            "Meta": meta,
            "__module__": __name__,
            "__doc__": f"The request body of POST …/transitions/{name}/ ({model._meta.label}).",
        },
    )


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _variant(model: Any, name: str, accept: tuple[str, ...]) -> str:
    """A suffix when steps declare ``name`` with different accepted fields, else ``""``."""
    if len(_declarations(model).get(name, ())) < 2:
        return ""
    return "Accepting" + "".join(_camel(field) for field in accept) if accept else "Plain"


def _declarations(model: Any) -> dict[str, list[tuple[str, ...]]]:
    """Per transition name, the distinct ``accept`` tuples its steps declare, in order."""
    found: dict[str, list[tuple[str, ...]]] = {}
    workflow = model.workflow
    for step in workflow.steps:
        for transition in workflow.transitions_in(step):  # from_any_step's too
            variants = found.setdefault(transition.name, [])
            if tuple(transition.accept) not in variants:
                variants.append(tuple(transition.accept))
    return found


# The mixin ------------------------------------------------------------------------

_UNAUTHENTICATED = (
    "not_authenticated: no credentials; authentication_failed: wrong credentials. 401 "
    "with WWW-Authenticate when an authentication class names a scheme (Basic, Token…)"
)
_ERRORS = {
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
_STATE_ERRORS = {
    code: OpenApiResponse(WorkflowStateErrorSerializer, description=text)
    for code, text in {
        401: f"{_UNAUTHENTICATED}.",
        403: "The viewset's permissions refused the requester (or no credentials, when no "
        "authentication class names a scheme).",
        404: "No such record for the requester.",
    }.items()
}
_WORKFLOW_ACTIONS = ("workflow", "workflow_transition")


def _body(request: Request) -> Any:
    """The parsed body; JSON nested deeper than the parser can follow is a parse error."""
    try:
        return request.data
    except RecursionError:
        raise exceptions.ParseError("JSON parse error - nested too deep.") from None


def _votes(record: Any) -> list[dict[str, Any]]:
    """Per ``quorum`` transition of the record's step, who voted for it in this stay."""
    from .engine import votes

    found = []
    for transition in type(record).workflow.transitions_in(record.current_step):
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


def _stored_step(record: Any) -> str | None:
    """The record's step as stored now (``None`` when the row is gone)."""
    attribute = type(record).workflow.state_attribute
    rows = type(record)._base_manager.using(record._state.db).filter(pk=record.pk)
    return rows.values_list(attribute, flat=True).first()


def _actor(request: Request) -> Any:
    """The requester as the workflow's actor: nobody when not authenticated."""
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


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
        responses={200: WorkflowStateSerializer, **_STATE_ERRORS},
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
            **_ERRORS,
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
        workflow = type(record).workflow
        step = record.current_step
        if transition not in workflow.transition_names:
            return self._workflow_error(
                status.HTTP_404_NOT_FOUND,
                transition,
                "unknown_transition",
                f"{type(record).__name__} declares no transition {transition!r}.",
                step=step,
            )
        declared = workflow.transition(step, transition)
        if declared is None:
            error = TransitionNotAllowed(record, transition, step)
            return self._workflow_error(
                status.HTTP_409_CONFLICT, transition, "transition_not_allowed", error, step=step
            )
        serializer_class = self.get_workflow_transition_serializer_class(record, declared)
        serializer = serializer_class(
            instance=record, data=_body(request), context=self.get_serializer_context()
        )
        if not serializer.is_valid():
            return self._workflow_error(
                status.HTTP_400_BAD_REQUEST,
                transition,
                "invalid",
                "The request body is not valid for this transition.",
                step=step,
                errors=serializer.errors,
            )
        values = dict(serializer.validated_data)
        comment = values.pop("comment", "")
        data = values.pop("data", None)
        try:
            record.transition(
                transition, actor=_actor(request), comment=comment, data=data, **values
            )
        except WorkflowPermissionDenied as error:
            return self._workflow_error(
                status.HTTP_403_FORBIDDEN, transition, "permission_denied", error, step=step
            )
        except AlreadyVoted as error:
            return self._workflow_error(
                status.HTTP_409_CONFLICT, transition, "already_voted", error, step=step
            )
        except ConditionUnmet as error:
            return self._workflow_error(
                status.HTTP_409_CONFLICT,
                transition,
                "condition_unmet",
                error,
                step=step,
                reason=error.reason,
            )
        except TransitionNotAllowed as error:
            return self._workflow_error(
                status.HTTP_409_CONFLICT, transition, "transition_not_allowed", error, step=step
            )
        except StaleRecord as error:
            stored = _stored_step(record)
            return self._workflow_error(
                status.HTTP_409_CONFLICT,
                transition,
                "stale_record",
                error,
                **({} if stored is None else {"step": stored}),  # gone: no step
                fields=list(error.fields),
            )
        except NoRouteMatched as error:
            return self._workflow_error(
                status.HTTP_422_UNPROCESSABLE_ENTITY,
                transition,
                "no_route_matched",
                error,
                step=step,
            )
        record.refresh_from_db()  # what is stored now (an automatic step may have run on)
        return Response(self.get_workflow_state(record))

    # Hooks ----------------------------------------------------------------------------

    def get_workflow_state(self, record: Any) -> Any:
        """The workflow state of ``record`` for the requester, as both endpoints answer."""
        workflow = type(record).workflow
        step = record.current_step
        actions = []
        for name in record.available_actions(_actor(self.request)):
            declared = workflow.transition(step, name)
            actions.append(
                {
                    "name": name,
                    "label": str(workflow.transition_label(name, step)),
                    "accept": list(declared.accept) if declared else [],
                }
            )
        history = record.history().order_by("-occurred_at", "-id")[: self.workflow_history_limit]
        state = {
            "step": step,
            "label": str(workflow.step_label(step)),
            "available_actions": actions,
            "pending_deadlines": record.pending_deadlines(),
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
            {"transition": transition, "error": error, "detail": str(detail), **extra},
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


class WorkflowModelPermissions(permissions.DjangoModelPermissions):
    """``DjangoModelPermissions``, except that running a transition needs the model's
    change permission (a POST would ask for add): moving a record changes it, as in
    the admin. The workflow's policy is checked as well, by the call itself."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if getattr(view, "action", None) != "workflow_transition":
            return super().has_permission(request, view)
        user = request.user
        if not user or (not user.is_authenticated and self.authenticated_users_only):
            return False
        model = view.get_queryset().model
        return user.has_perms(self.get_required_permissions("PATCH", model))


# OpenAPI --------------------------------------------------------------------------


def _workflow_model(view: Any) -> Any:
    """The workflow model a viewset class serves, or ``None`` when it cannot tell."""
    for model in (
        getattr(view, "workflow_model", None),
        getattr(getattr(view, "queryset", None), "model", None),
        getattr(getattr(getattr(view, "serializer_class", None), "Meta", None), "model", None),
    ):
        if getattr(model, "workflow", None) is not None:
            return model
    return None


class _TransitionBodies(PolymorphicProxySerializer):
    """The request bodies of a model's transitions: the path's transition names one."""


class _TransitionBodiesExtension(PolymorphicProxySerializerExtension):
    """``anyOf`` rather than ``oneOf``: bodies of different transitions may look alike
    (no accepted field at all), and the path, not the body, tells them apart."""

    target_class = _TransitionBodies

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema = super().map_serializer(auto_schema, direction)
        return {
            "anyOf": schema["oneOf"],
            "description": "The body of the transition named in the path; see its component.",
        }


@cache
def _with_transition_schema(view: type) -> type:
    """``view`` annotated with its model's transition names and request bodies."""
    model = _workflow_model(view)
    declarations = _declarations(model) if model is not None else {}
    if not declarations:  # no model known, or no manual transition: the generic body
        return view
    bodies = [
        transition_serializer(model, name, accept)
        for name, variants in declarations.items()
        for accept in variants
    ]
    names = list(declarations)
    described = "; ".join(
        f"{name}: {', '.join(_name(model, name, accept) for accept in variants)}"
        for name, variants in declarations.items()
    )
    parameter = OpenApiParameter(
        "transition",
        str,
        OpenApiParameter.PATH,
        enum=names,
        description=f"A transition of {model._meta.label}. Request body per transition: "
        f"{described}.",
    )
    annotated = extend_schema(
        request=_TransitionBodies(
            component_name=f"{model.__name__}TransitionBody",
            serializers=bodies,
            resource_type_field_name=None,
        ),
        parameters=[parameter],
    )
    replacement = type(view.__name__, (view,), {"__module__": view.__module__})
    return extend_schema_view(workflow_transition=annotated)(replacement)


def _name(model: Any, name: str, accept: tuple[str, ...]) -> str:
    return transition_serializer(model, name, accept).__name__.removesuffix("Serializer")


class WorkflowViewSetSchema(OpenApiViewExtension):
    """Lets drf-spectacular describe each viewset's own transitions (found by subclass)."""

    target_class = WorkflowViewSetMixin
    match_subclasses = True
    priority = -1  # a project's own extension for its viewset wins

    def view_replacement(self) -> type:
        return _with_transition_schema(self.target)
