"""The OpenAPI schema of each workflow viewset: its own transition names and request
bodies, found by drf-spectacular through ``WorkflowViewSetSchema`` (registered when
this module is imported, as ``django_workflow.rest`` does)."""

from __future__ import annotations

from functools import cache
from typing import Any

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.serializers import PolymorphicProxySerializerExtension
from drf_spectacular.utils import (
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
)

from .bodies import declarations, transition_serializer
from .viewset import WorkflowViewSetMixin


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
    declared = declarations(model) if model is not None else {}
    own = {"__module__": view.__module__, "__doc__": _own_doc(view)}
    if not declared:  # no model known, or no manual transition: the generic body
        return type(view.__name__, (view,), own)
    bodies = [
        transition_serializer(model, name, accept)
        for name, variants in declared.items()
        for accept in variants
    ]
    names = list(declared)
    described = "; ".join(
        f"{name}: {', '.join(_name(model, name, accept) for accept in variants)}"
        for name, variants in declared.items()
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
    replacement = type(view.__name__, (view,), own)
    return extend_schema_view(workflow_transition=annotated)(replacement)


def _own_doc(view: type) -> str:
    """The viewset's own docstring, never the mixin's: drf-spectacular describes each
    operation by the first docstring up the class's bases. ``" "``: none, and it stops."""
    for klass in view.__mro__:
        if klass is WorkflowViewSetMixin:
            break
        if klass.__doc__:
            return klass.__doc__
    return " "


def _name(model: Any, name: str, accept: tuple[str, ...]) -> str:
    return transition_serializer(model, name, accept).__name__.removesuffix("Serializer")


class WorkflowViewSetSchema(OpenApiViewExtension):
    """Lets drf-spectacular describe each viewset's own transitions (found by subclass)."""

    target_class = WorkflowViewSetMixin
    match_subclasses = True
    priority = -1  # a project's own extension for its viewset wins

    def view_replacement(self) -> type:
        return _with_transition_schema(self.target)
