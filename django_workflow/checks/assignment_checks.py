"""Assignment (``Workflow.assignment = True``): claim steps, ``release_after``, the
``assign`` policy (E063-E065). E066, a transition named like ``claim``, ``release`` or
``assign``, is retired: the transition takes the name, ``record.workflow`` keeps the call."""

from __future__ import annotations

from typing import Any

from ..durations import InvalidDuration, parse_duration, shortest
from ..model.compiled import CompiledWorkflow
from .common import Messages, error, where

ASSIGN = "assign"


def check_assignment(model: Any, workflow: CompiledWorkflow) -> Messages:
    yield from _check_claim_steps(model, workflow)
    yield from _check_release_after(model, workflow)
    yield from _check_assign_policy(model, workflow)


def _check_claim_steps(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E063: ``claim`` is True or False, and True only with ``assignment = True`` on a
    step a person acts in."""
    for step_name, step in workflow.steps.items():
        if not isinstance(step.claim, bool):
            yield error(
                model,
                f"{where(step_name)}: claim={step.claim!r} is not True or False.",
                "Step(..., claim=True) lets only the record's holder call the step's transitions.",
                "E063",
            )
        elif step.claim and not workflow.assignment:
            yield error(
                model,
                f"{where(step_name)}: claim=True, but the workflow has no holders.",
                "Declare assignment = True in the Workflow (it adds the assignee and "
                "assigned_at fields; run makemigrations), or drop claim=True.",
                "E063",
            )
        elif step.claim and not step.is_manual:
            yield error(
                model,
                f"{where(step_name)}: claim=True on a step with no transitions to call.",
                "Only a manual step's transitions are held; drop claim=True here.",
                "E063",
            )


def _check_release_after(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E064: ``release_after`` is a positive duration, on a ``claim=True`` step."""
    for step_name, step in workflow.steps.items():
        if step.release_after is None:
            continue
        place = where(step_name)
        if step.claim is not True:
            yield error(
                model,
                f"{place}: release_after={step.release_after!r} without claim=True.",
                "release_after lets go of a claim that did not move the record; it needs "
                "Step(..., claim=True, release_after=...).",
                "E064",
            )
            continue
        try:
            duration = parse_duration(step.release_after)
        except InvalidDuration as problem:
            yield error(model, f"{place}: release_after: {problem}", _DURATIONS, "E064")
            continue
        if shortest(duration).total_seconds() <= 0:
            yield error(
                model,
                f"{place}: release_after={step.release_after!r} is not longer than zero.",
                _DURATIONS,
                "E064",
            )


_DURATIONS = 'A duration: a timedelta, (3, "days"), or "30m", "4h", "2d", "1bd".'


def _check_assign_policy(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E065: ``Workflow.policies["assign"]`` only with ``assignment = True``, callable."""
    if ASSIGN not in workflow.policies or ASSIGN in workflow.transition_names:
        return
    if not workflow.assignment:
        yield error(
            model,
            "Workflow.policies names 'assign', but the workflow has no holders.",
            "The 'assign' policy says who may assign records: declare assignment = True, "
            "or remove the entry.",
            "E065",
        )
    elif not callable(workflow.policies[ASSIGN]):
        yield error(
            model,
            "Workflow.policies['assign'] is not callable.",
            "A policy is a callable (actor, record, name) -> bool.",
            "E065",
        )
