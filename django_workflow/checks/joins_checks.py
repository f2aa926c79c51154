"""Joins: ``Join(related_name, all_in=[...], to=..., any_in={child_step: parent_step})``
names a reverse relation to a workflow model, steps of that child model, steps of the
parent, and sits in a step that waits (E058-E062)."""

from __future__ import annotations

from typing import Any

from ..model.compiled import CompiledWorkflow
from ..model.relations import relation_named
from .common import Messages, error, where


def check_joins(model: Any, workflow: CompiledWorkflow) -> Messages:
    for step_name, step in workflow.steps.items():
        for join in step.joins:
            place = where(step_name, f"Join({join.related_name!r})")
            if step.is_automatic:
                yield error(
                    model,
                    f"{place} is in an automatic step (action={step.action!r}): the action "
                    "and the join would both move the record.",
                    "Put the join in a step of its own that the automatic step leads to.",
                    "E062",
                )
            yield from _check_parent_steps(model, workflow, place, join)
            child = yield from _child_workflow(model, place, join.related_name)
            if child is not None:
                yield from _check_child_steps(model, place, join, child)


def _child_workflow(model: Any, place: str, related_name: Any) -> Any:
    """E058 no such reverse relation, E059 one to a model without a workflow; else the
    children's compiled workflow."""
    relation = relation_named(model, related_name) if isinstance(related_name, str) else None
    if relation is None:
        names = sorted(r.get_accessor_name() for r in model._meta.related_objects)
        yield error(
            model,
            f"{place} joins over {related_name!r}, which is no reverse relation of "
            f"{model.__name__}.",
            "Name the related_name of a ForeignKey pointing at this model; it has: "
            f"{', '.join(map(str, names)) or 'none'}.",
            "E058",
        )
        return None
    child = relation.related_model
    workflow = getattr(child, "workflow", None)
    if not isinstance(workflow, CompiledWorkflow):
        yield error(
            model,
            f"{place} joins over {related_name!r}, but {child.__name__} has no workflow: "
            "its records are never in a step.",
            f"Make {child.__name__} a WorkflowModel, or join over another relation.",
            "E059",
        )
        return None
    return workflow


def _check_child_steps(model: Any, place: str, join: Any, child: CompiledWorkflow) -> Messages:
    """E060: ``all_in`` and the keys of ``any_in`` are steps of the children."""
    all_in = join.all_in if isinstance(join.all_in, list | tuple | set | frozenset) else None
    any_in = join.any_in if isinstance(join.any_in, dict) else None
    named = [*(all_in or ()), *(any_in or {})]
    unknown = [name for name in named if not isinstance(name, str) or name not in child.steps]
    if all_in is None or any_in is None or unknown:
        yield error(
            model,
            f"{place} names children's steps {unknown or [join.all_in, join.any_in]!r} that "
            f"{child.model.__name__} does not declare.",
            f"all_in is a list and any_in's keys are steps of {child.model.__name__}: "
            f"{', '.join(child.steps)}.",
            "E060",
        )


def _check_parent_steps(model: Any, workflow: CompiledWorkflow, place: str, join: Any) -> Messages:
    """E061: ``to`` and the values of ``any_in`` are steps of the parent."""
    any_in = join.any_in if isinstance(join.any_in, dict) else {}
    targets = [join.to, *any_in.values()]
    unknown = [t for t in targets if not isinstance(t, str) or t not in workflow.steps]
    if unknown:
        yield error(
            model,
            f"{place} sends the record to {unknown!r}, which {model.__name__} does not declare.",
            f"to= and any_in's values are steps of {model.__name__}: {', '.join(workflow.steps)}.",
            "E061",
        )
