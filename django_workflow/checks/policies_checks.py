"""Policies: callable, naming real transitions, one policy per transition name, and
said as a filter where they can be (``actionable_by``)."""

from __future__ import annotations

from typing import Any

from ..model.compiled import CompiledWorkflow
from .common import Messages, error, warning, where


def check_policies(model: Any, workflow: CompiledWorkflow) -> Messages:
    yield from _check_named_policies(model, workflow)
    yield from _check_step_policies(model, workflow)
    yield from _check_shared_names(model, workflow)
    yield from _check_filter_forms(model, workflow)


def _check_named_policies(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E021: ``Workflow.policies`` names transitions and holds callables."""
    names = set(workflow.transition_names)
    for name, policy in workflow.policies.items():
        if name == "assign" and name not in names:
            continue  # who may assign records (``assignment``): E065
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


def _check_filter_forms(model: Any, workflow: CompiledWorkflow) -> Messages:
    """W007: a policy guarding a transition that has no ``q(actor)``, so ``actionable_by``
    and the inbox ask it record by record. ``q = None`` on the policy says so on purpose."""
    seen: list[Any] = []
    for step_name in workflow.steps:
        for transition in workflow.transitions_in(step_name):
            policy = workflow.policy_for(step_name, transition.name)
            for part in _without_filter(policy):
                if part in seen:
                    continue
                seen.append(part)
                yield warning(
                    model,
                    f"{where(step_name, f'transition {transition.name!r}')}: policy {_name(part)} "
                    "has no q(actor), so actionable_by() and the inbox call it on every "
                    "record of the step.",
                    "Give it a method q(self, actor) -> Q returning the records it allows, "
                    "build it from the shipped policies, or set q = None on it to say that "
                    "it is asked record by record on purpose.",
                    "W007",
                )


def _without_filter(policy: Any) -> list[Any]:
    """The callable parts of ``policy`` (itself, or inside ``any_of``/``all_of``) with no ``q``."""
    if policy is None or not callable(policy):
        return []  # no policy, or one E021 reports
    parts = getattr(policy, "policies", None)
    if isinstance(parts, tuple):
        return [found for part in parts for found in _without_filter(part)]
    if hasattr(policy, "q"):
        return []  # a filter form, or ``q = None``: asked per record on purpose
    return [policy]


def _name(policy: Any) -> str:
    """A function by its name (its repr holds an address), anything else by its repr."""
    name = getattr(policy, "__qualname__", None)
    return name if isinstance(name, str) else repr(policy)
