"""Events from outside: ``Workflow.events = {"name": Receive(key=..., transition=...,
buffer=...)}`` names a transition of the workflow, a field holding the key, and a
wall-clock buffer (E073-E075, W011)."""

from __future__ import annotations

from typing import Any

from ..declaration import Receive
from ..durations import InvalidDuration, parse_timedelta
from ..model.compiled import CompiledWorkflow
from ..model.registry import workflow_models
from .common import Messages, error, field, warning


def check_events(model: Any, workflow: CompiledWorkflow) -> Messages:
    for name, receive in workflow.events.items():
        place = f"event {name!r}"
        if not isinstance(name, str) or not name or not isinstance(receive, Receive):
            yield error(
                model,
                f"Workflow.events[{name!r}] is {receive!r}.",
                'Map each event name (a non-empty string) to Receive(key="field", '
                'transition="name").',
                "E073",
            )
            continue
        yield from _check_transition(model, workflow, place, receive)
        yield from _check_elsewhere(model, place, name)
        yield from _check_key(model, place, receive.key)
        yield from _check_buffer(model, place, receive.buffer)


def _check_transition(
    model: Any, workflow: CompiledWorkflow, place: str, receive: Receive
) -> Messages:
    """E073: the transition is declared in some step (or ``from_any_step``)."""
    names = workflow.transition_names
    if receive.transition not in names:
        yield error(
            model,
            f"{place} calls transition {receive.transition!r}, which {model.__name__} does "
            "not declare.",
            f"Name one of its transitions: {', '.join(names) or 'none'}.",
            "E073",
        )
    elif any(t.quorum is not None for t in _declarations(workflow, receive.transition)):
        yield error(
            model,
            f"{place} calls transition {receive.transition!r}, which counts votes "
            "(quorum): an event is nobody's vote.",
            "Let the event call a transition without quorum.",
            "E073",
        )


def _declarations(workflow: CompiledWorkflow, name: str) -> list[Any]:
    declared = [t for step in workflow.steps.values() for t in step.transitions]
    return [t for t in [*declared, *workflow.from_any_step] if t.name == name]


def _check_elsewhere(model: Any, place: str, name: str) -> Messages:
    """E073: one event name is received by one model, so a delivery finds its record."""
    others = [
        other.__name__
        for other in workflow_models()
        if other is not model and name in getattr(other.workflow, "events", {})
    ]
    if others:
        yield error(
            model,
            f"{place} is also received by {', '.join(sorted(others))}: a delivery could "
            "not tell which record it is for.",
            "Give each model's events names of their own, e.g. prefixed with the model.",
            "E073",
        )


def _check_key(model: Any, place: str, key: Any) -> Messages:
    """E074: the key is a concrete field of the model; W011: a unique one."""
    found = field(model, key) if isinstance(key, str) else None
    if found is None or not getattr(found, "concrete", False) or found.many_to_many:
        names = [f.name for f in model._meta.concrete_fields]
        yield error(
            model,
            f"{place} correlates on key {key!r}, which is no field of {model.__name__}.",
            f"Name the field holding the outside system's reference: {', '.join(names)}.",
            "E074",
        )
    elif not (found.unique or found.primary_key):
        yield warning(
            model,
            f"{place} correlates on {key!r}, which is not unique: an event whose key several "
            "records share is applied to the first of them.",
            f"Declare {model.__name__}.{key} with unique=True.",
            "W011",
        )


def _check_buffer(model: Any, place: str, buffer: Any) -> Messages:
    """E075: ``buffer`` is ``None`` or a positive wall-clock duration."""
    if buffer is None:
        return
    try:
        parse_timedelta(buffer)
    except InvalidDuration as unreadable:
        yield error(
            model,
            f"{place}: buffer {unreadable}",
            'Give buffer a positive duration such as "1d", "6h" or timedelta(hours=6) '
            "(business days are not counted here), or None to keep no early events.",
            "E075",
        )
