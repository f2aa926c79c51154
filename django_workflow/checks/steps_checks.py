"""Steps: their kind, the initial step, what an automatic step needs, and their children."""

from __future__ import annotations

from typing import Any

from django.utils.functional import Promise

from ..declaration import Every, Join, Retry, Route, Step, StepKind, Timeout, Transition
from ..model.compiled import CompiledWorkflow
from ..model.generation import STATE_MAX_LENGTH
from .common import Messages, check_duration, check_method, error, where
from .transitions_checks import check_routes


def check_steps(model: Any, workflow: CompiledWorkflow) -> Messages:
    yield from _check_some_step_moves(model, workflow)
    yield from _check_initial(model, workflow)
    for name, step in workflow.steps.items():
        for rule in STEP_RULES:
            yield from rule(model, name, step)


def _check_some_step_moves(model: Any, workflow: CompiledWorkflow) -> Messages:
    if all(step.is_terminal for step in workflow.steps.values()):
        yield error(
            model,
            "the workflow has no non-terminal step, so no record could ever move.",
            "Declare at least one step with transitions, an action or timeouts.",
            "E003",
        )


def _check_initial(model: Any, workflow: CompiledWorkflow) -> Messages:
    initial = [name for name, step in workflow.steps.items() if step.initial is True]
    if len(initial) > 1:
        yield error(
            model,
            f"several steps are marked initial: {', '.join(initial)}.",
            "Mark exactly one step with initial=True.",
            "E004",
        )
    for name in initial:
        if workflow.steps[name].is_terminal:
            yield error(
                model,
                f"{where(name)} is marked initial but is terminal.",
                "A record would start where it can never leave; mark another step initial.",
                "E005",
            )


def _check_name(model: Any, name: str, step: Step) -> Messages:
    if len(name) > STATE_MAX_LENGTH or name.startswith("_"):
        yield error(
            model,
            f"{where(name)}: a step name must not start with '_' and must fit "
            f"{STATE_MAX_LENGTH} characters.",
            "Rename the step.",
            "E029",
        )


def _check_terminal(model: Any, name: str, step: Step) -> Messages:
    if step.terminal is True and (step.children or step.action or step.on_success or step.on_error):
        yield error(
            model,
            f"{where(name)} is terminal=True but declares ways out.",
            "Remove its transitions, action, on_success and on_error, or drop terminal=True.",
            "E006",
        )


def _check_kind(model: Any, name: str, step: Step) -> Messages:
    """E007, E008, E011: a step is manual, automatic or waiting, and whole."""
    if step.transitions and (step.action or step.on_success or step.on_error):
        yield error(
            model,
            f"{where(name)} has transitions and also action/on_success/on_error.",
            "A manual step waits for a person; move the action to an automatic step of its own.",
            "E007",
        )
    elif step.action and step.on_success is None:
        yield error(
            model,
            f"{where(name)} is automatic (action={step.action!r}) but has no on_success.",
            "Set on_success to a step name or a list of Route(...).",
            "E008",
        )
    elif step.action is None and (step.on_success is not None or step.on_error is not None):
        yield error(
            model,
            f"{where(name)} has on_success/on_error but no action.",
            "Name the model method to run with action='method_name'.",
            "E008",
        )
    elif step.kind == StepKind.WAIT and not _leaves_by_timeout(step):
        yield error(
            model,
            f"{where(name)} only waits, but none of its timeouts has transition_to: "
            "records could never leave it.",
            "Add a Timeout(..., transition_to='step'), or a transition.",
            "E011",
        )


def _leaves_by_timeout(step: Step) -> bool:
    """A waiting step's way out: a timeout moving on, or a join."""
    return any(timeout.transition_to for timeout in step.timeouts) or bool(step.joins)


def _check_children(model: Any, name: str, step: Step) -> Messages:
    """E019: what a step holds is a declaration object."""
    for child in step.children:
        if not isinstance(child, Transition | Timeout | Every | Join):
            yield error(
                model,
                f"{where(name)}: {child!r} is not a Transition, Timeout, Every or Join.",
                "A step's positional arguments are Transition, Timeout, Every and Join "
                "declarations.",
                "E019",
            )
    if step.retry is not None and not isinstance(step.retry, Retry):
        yield error(model, f"{where(name)}: retry={step.retry!r} is not a Retry.", "", "E019")
    yield from check_routes(model, name, "on_success", step.routes)


def _check_duplicate_names(model: Any, name: str, step: Step) -> Messages:
    for kind, children in (("transition", step.transitions), ("deadline", step.deadlines)):
        names = [child.name for child in children]
        for duplicate in sorted({n for n in names if names.count(n) > 1}, key=str):
            yield error(
                model,
                f"{where(name)} declares {kind} {duplicate!r} twice.",
                f"Give each {kind} of a step its own name.",
                "E015",
            )


def _check_action(model: Any, name: str, step: Step) -> Messages:
    if step.action is not None:
        yield from check_method(model, where(name), step.action)


def _check_way_out_on_failure(model: Any, name: str, step: Step) -> Messages:
    """E010: when no on_success route matches, the record needs somewhere to go.

    ``on_error`` is such a way; so is a ``transition_to`` timeout, which moves a
    record the action left in the step.
    """
    routes = step.routes
    if not (step.action and routes) or step.on_error is not None or _leaves_by_timeout(step):
        return
    if all(isinstance(route, Route) and route.when is not None for route in routes):
        yield error(
            model,
            f"{where(name)}: every on_success route is conditional and there is neither "
            "on_error nor a transition_to timeout, so a record no route matches has no way out.",
            "Add an unconditional Route last, set on_error, or add a "
            "Timeout(..., transition_to='step').",
            "E010",
        )


def _check_retry(model: Any, name: str, step: Step) -> Messages:
    if step.retry is not None and step.action is None and step.on_enter is None:
        yield error(
            model,
            f"{where(name)} declares retry but runs no action.",
            "Remove retry, or give the step action=... or on_enter=...",
            "E022",
        )
    if not isinstance(step.retry, Retry):
        return
    attempts = step.retry.max_attempts
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
        yield error(
            model,
            f"{where(name)}: Retry max_attempts={attempts!r} must be a whole number, at least 1.",
            "max_attempts counts the first try too.",
            "E026",
        )
    if step.retry.backoff != "exponential":
        yield from check_duration(model, f"{where(name)} retry backoff", step.retry.backoff)


def _check_time_limit(model: Any, name: str, step: Step) -> Messages:
    if step.time_limit is None:
        return
    if step.action is None and step.on_enter is None:
        yield error(
            model,
            f"{where(name)} declares time_limit but runs no action.",
            "Remove time_limit, or give the step action=... or on_enter=...",
            "E022",
        )
    yield from check_duration(model, f"{where(name)} time_limit", step.time_limit)


def _check_on_enter(model: Any, name: str, step: Step) -> Messages:
    """E034: ``on_enter`` names a method of the model."""
    if step.on_enter is not None and not callable(getattr(model, str(step.on_enter), None)):
        yield error(
            model,
            f"{where(name)}: on_enter {step.on_enter!r} is not a method of the model.",
            f"Define `def {step.on_enter}(self):` on {model.__name__}; the worker runs it "
            "once per entry into the step.",
            "E034",
        )


def _check_labels(model: Any, name: str, step: Step) -> Messages:
    """E031: a label (a step's, a transition's, a deadline's) is text or a lazy
    translation, shown wherever the name would be."""
    labelled = [(where(name), step.label)]
    labelled += [(where(name, f"transition {t.name!r}"), t.label) for t in step.transitions]
    labelled += [(where(name, f"deadline {d.name!r}"), d.label) for d in step.deadlines]
    for place, label in labelled:
        if label is not None and not isinstance(label, str | Promise):
            yield error(
                model,
                f"{place} has label={label!r}, which is not text.",
                'Give a string or a lazy translation: label=_("Awaiting interview").',
                "E031",
            )


STEP_RULES = (
    _check_name,
    _check_labels,
    _check_on_enter,
    _check_terminal,
    _check_kind,
    _check_children,
    _check_duplicate_names,
    _check_action,
    _check_way_out_on_failure,
    _check_retry,
    _check_time_limit,
)
