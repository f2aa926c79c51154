"""Undo: the ``undo`` option, ``undoable=True`` transitions, and the log both need."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..declaration import Transition
from ..model.compiled import CompiledWorkflow
from .common import Messages, check_duration, error, warning, where


def check_undo(model: Any, workflow: CompiledWorkflow) -> Messages:
    yield from _check_undo_option(model, workflow)
    yield from _check_undoable_transitions(model, workflow)


def _check_undo_option(model: Any, workflow: CompiledWorkflow) -> Messages:
    if workflow.undo is None:
        return
    if not workflow.log:
        yield error(
            model,
            "`undo` is set but `log` is not: undo reads the transition log.",
            "Set `log = True` in the Workflow, or remove `undo`.",
            "E025",
        )
    if workflow.undo.within is not None:
        yield from check_duration(model, "undo within", workflow.undo.within)
    if not any(transition.undoable is True for _step, transition in _transitions(workflow)):
        yield warning(
            model,
            "`Workflow.undo` is set but no step has an undoable=True transition, "
            "so there is nothing to undo.",
            "Mark the transitions a person may take back with undoable=True, or remove `undo`.",
            "W006",
        )


def _check_undoable_transitions(model: Any, workflow: CompiledWorkflow) -> Messages:
    # An `undo` of the wrong type is reported as E027; it is not missing.
    undo_missing = workflow.undo is None and all(p.option != "undo" for p in workflow.problems)
    for step_name, transition in _transitions(workflow):
        if transition.undoable is not True:
            continue
        place = where(step_name, f"transition {transition.name!r}")
        if not workflow.log:
            yield error(
                model,
                f"{place} is undoable but the workflow has no log.",
                "Set `log = True` in the Workflow: undo reads the transition log.",
                "E025",
            )
        if undo_missing:
            yield error(
                model,
                f"{place} is undoable=True but the workflow has no `undo`, so it can never "
                "be undone.",
                "Set `undo = Undo(...)` in the Workflow (undo needs `log = True` too), "
                "or remove undoable=True.",
                "E030",
            )


def _transitions(workflow: CompiledWorkflow) -> Iterator[tuple[str, Transition]]:
    for step_name, step in workflow.steps.items():
        for transition in step.transitions:
            yield step_name, transition
