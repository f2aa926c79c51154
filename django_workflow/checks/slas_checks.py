"""``Workflow.slas``: service-level clocks, their steps, targets, shares and handlers."""

from __future__ import annotations

from typing import Any

from ..declaration import Sla
from ..durations import BusinessDays, InvalidDuration, parse_duration
from ..model.compiled import CompiledWorkflow
from ..work.sla_clocks_read import warns
from .common import Messages, error


def check_slas(model: Any, workflow: CompiledWorkflow) -> Messages:
    for name, sla in workflow.slas.items():
        place = f"slas[{name!r}]"
        yield from _check_name(model, place, name)
        yield from _check_steps(model, workflow, place, sla)
        yield from _check_target(model, place, sla)
        yield from _check_warning(model, place, sla)
        for option in ("on_warn", "on_breach"):
            yield from _check_handler(model, workflow, place, option, getattr(sla, option))


def _check_name(model: Any, place: str, name: Any) -> Messages:
    if not (isinstance(name, str) and name.isidentifier()):
        yield error(
            model,
            f"{place}: an SLA's name must be an identifier: it names the record's columns.",
            "Name it like a field, e.g. 'resolution' or 'first_response'.",
            "E069",
        )


def _check_steps(model: Any, workflow: CompiledWorkflow, place: str, sla: Sla) -> Messages:
    running = [s for s in sla.runs_in if s in workflow.steps]
    unknown = [s for s in sla.runs_in if s not in workflow.steps]
    terminal = [s for s in running if workflow.steps[s].is_terminal]
    steps = ", ".join(workflow.steps)
    if unknown:
        yield error(
            model,
            f"{place}: runs_in names {', '.join(map(repr, unknown))}, not a step of the workflow.",
            f"The steps are: {steps}.",
            "E069",
        )
    if terminal:
        yield error(
            model,
            f"{place}: runs_in names the terminal step {', '.join(map(repr, terminal))}; "
            "a clock stops at a terminal step.",
            "Name the steps in which the work the SLA measures is done.",
            "E069",
        )
    if not sla.runs_in:
        yield error(
            model,
            f"{place}: runs_in names no step, so its clock never runs.",
            f"Name the steps in which it runs, among: {steps}.",
            "E069",
        )


def _check_target(model: Any, place: str, sla: Sla) -> Messages:
    try:
        duration = parse_duration(sla.target)
    except InvalidDuration as problem:
        yield error(model, f"{place}: target {problem}", "", "E070")
        return
    if isinstance(duration, BusinessDays):
        yield error(
            model,
            f"{place}: target {sla.target!r} is in business days; a clock that pauses "
            "counts time, not days.",
            "Count it in business hours ('16bh', with working_hours) or calendar time ('2d').",
            "E070",
        )


def _check_warning(model: Any, place: str, sla: Sla) -> Messages:
    if sla.warn_at is not None and not warns(sla):
        yield error(
            model,
            f"{place}: warn_at {sla.warn_at!r} is not a share of the target.",
            "Give a number strictly between 0 and 1, e.g. warn_at=0.8 for 80 %.",
            "E071",
        )
    elif sla.warn_at is None and sla.on_warn is not None:
        yield error(
            model,
            f"{place}: on_warn {sla.on_warn!r} is given without warn_at, so it never fires.",
            "Give warn_at=0.8 (a share of the target), or remove on_warn.",
            "E071",
        )


def _check_handler(
    model: Any, workflow: CompiledWorkflow, place: str, option: str, handler: Any
) -> Messages:
    if handler is None or handler in workflow.transition_names:
        return
    if not (isinstance(handler, str) and callable(getattr(model, handler, None))):
        transitions = ", ".join(workflow.transition_names) or "none"
        yield error(
            model,
            f"{place}: {option} {handler!r} is neither a method of {model.__name__} nor a "
            "transition of its workflow.",
            f"Define `def {handler}(self):` on the model, or name a transition ({transitions}).",
            "E072",
        )
