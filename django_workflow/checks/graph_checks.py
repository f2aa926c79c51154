"""The steps as a graph: every step named is declared, every step can be reached."""

from __future__ import annotations

from collections.abc import Iterator
from difflib import get_close_matches
from typing import Any

from ..declaration import Step
from ..model.compiled import CompiledWorkflow
from .common import Messages, error, where


def check_references(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E012: a step name used anywhere is declared."""
    for place, target in _undeclared(workflow):
        yield error(
            model,
            f"{place} names step {target!r}, which is not declared.",
            _suggestion(target, workflow) + f"Declared steps: {', '.join(workflow.steps)}.",
            "E012",
        )


def _undeclared(workflow: CompiledWorkflow) -> Iterator[tuple[str, Any]]:
    """(place, name) for every step name used but not declared."""
    for name, step in workflow.steps.items():
        for entity, target in _targets(step):
            if target not in workflow.steps:
                yield where(name, entity), target
    for transition in workflow.from_any_step:
        for target in transition.targets:
            if target not in workflow.steps:
                yield f"from_any_step, transition {transition.name!r}", target


def _suggestion(target: Any, workflow: CompiledWorkflow) -> str:
    close = get_close_matches(str(target), list(workflow.steps), n=1)
    return f"Did you mean {close[0]!r}? " if close else ""


def check_reachable(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E013: every step can be reached from the initial step.

    Silent while E012 reports a name that is not declared: a misspelt target is
    one mistake, and the step it meant would otherwise be reported unreachable too.
    """
    start = workflow.initial_step
    if start is None or next(_undeclared(workflow), None) is not None:
        return
    reached = _reached_from(workflow, start)
    for name in workflow.steps:
        if name not in reached:
            yield error(
                model,
                f"{where(name)} cannot be reached from the initial step {start!r}.",
                "Route a transition, on_success or on_error to it, or remove it.",
                "E013",
            )


def _reached_from(workflow: CompiledWorkflow, start: str) -> set[str]:
    reached, frontier = {start}, [start]
    while frontier:
        current = frontier.pop()
        shared = [t for transition in workflow.transitions_in(current) for t in transition.targets]
        shared += [t for join in workflow.steps[current].joins for t in join_targets(join)]
        for target in [*(target for _entity, target in _targets(workflow.steps[current])), *shared]:
            if target in workflow.steps and target not in reached:
                reached.add(target)
                frontier.append(target)
    return reached


def join_targets(join: Any) -> list[Any]:
    """The parent steps a join may send its parent to (maybe malformed)."""
    any_in = join.any_in if isinstance(join.any_in, dict) else {}
    return [target for target in [join.to, *any_in.values()] if isinstance(target, str)]


def _targets(step: Step) -> Iterator[tuple[str, Any]]:
    """(entity, step name) for every way out of ``step``, as declared (maybe malformed)."""
    for transition in step.transitions:
        for target in transition.targets:
            yield f"transition {transition.name!r}", target
    for route in step.routes:
        yield "on_success", getattr(route, "to", route)
    if step.on_error is not None:
        yield "on_error", step.on_error
    for timeout in step.timeouts:
        if timeout.transition_to is not None:
            yield f"timeout {timeout.name!r}", timeout.transition_to
