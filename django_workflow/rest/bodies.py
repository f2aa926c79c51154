"""What a transition takes over REST: one request serializer per model, transition and
accepted fields, built from the model's fields, plus ``comment`` and ``data``."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from django.utils.text import get_text_list
from rest_framework import serializers

from ..errors import InvalidLogValue
from ..model import log_values


class _Text(serializers.CharField):
    """Text only: a number or a boolean is refused, not stored as its ``str()``. NUL and
    lone surrogates are refused by ``CharField``'s own validators."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class _LogData(serializers.JSONField):
    """JSON that every database stores on the log row and reads back (see
    ``django_workflow.model.log_values``): valid Unicode, no NUL, bounded depth and size."""

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
                accepted = get_text_list([*self.Meta.accept, "comment", "data"], "and")
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
    if len(declarations(model).get(name, ())) < 2:
        return ""
    return "Accepting" + "".join(_camel(field) for field in accept) if accept else "Plain"


def declarations(model: Any) -> dict[str, list[tuple[str, ...]]]:
    """Per transition name, the distinct ``accept`` tuples its steps declare, in order."""
    found: dict[str, list[tuple[str, ...]]] = {}
    workflow = model.workflow
    for step in workflow.steps:
        for transition in workflow.transitions_in(step):  # from_any_step's too
            variants = found.setdefault(transition.name, [])
            if tuple(transition.accept) not in variants:
                variants.append(tuple(transition.accept))
    return found
