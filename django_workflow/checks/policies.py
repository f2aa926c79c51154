"""Policies: callable, naming real transitions, one policy per transition name."""

from __future__ import annotations

from typing import Any

from ..compiled import CompiledWorkflow
from .common import Messages, error, where


def check_policies(model: Any, workflow: CompiledWorkflow) -> Messages:
    yield from _check_named_policies(model, workflow)
    yield from _check_step_policies(model, workflow)
    yield from _check_shared_names(model, workflow)


def _check_named_policies(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E021: ``Workflow.policies`` names transitions and holds callables."""
    names = set(workflow.transition_names)
    for name, policy in workflow.policies.items():
        if name not in names:
            yield error(
                model,
                f"Workflow.policies names {name!r}, which no step declares as a transition.",
                f"Transitions: {', '.join(sorted(names)) or 'none'}.",
                "E021",
            )
        if not callable(policy):
            yield error(model, f"Workflow.policies[{name!r}] is not callable.", "", "E021")


def _check_step_policies(model: Any, workflow: CompiledWorkflow) -> Messages:
    for step_name, step in workflow.steps.items():
        if step.policy is not None and not callable(step.policy):
            yield error(
                model,
                f"{where(step_name)}: policy {step.policy!r} is not callable.",
                "A policy is a callable (actor, record, transition_name) -> bool.",
                "E021",
            )


def _check_shared_names(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E018: a name shared by steps with different policies, unless ``policies`` settles it."""
    by_name: dict[str, list[tuple[str, Any]]] = {}
    for step_name, step in workflow.steps.items():
        for transition in step.transitions:
            if isinstance(transition.name, str) and transition.name not in workflow.policies:
                by_name.setdefault(transition.name, []).append((step_name, step.policy))
    for name, found in by_name.items():
        if any(policy != found[0][1] for _step, policy in found):
            yield error(
                model,
                f"transition {name!r} is shared by steps {', '.join(s for s, _ in found)} "
                "whose policies differ.",
                f"Give the steps one policy, or set Workflow.policies = {{{name!r}: ...}}.",
                "E018",
            )
