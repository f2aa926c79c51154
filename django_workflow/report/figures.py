"""What the time-in-step report gives: per step, its stays and their figures, and per
timeout of the step its breach rate; and how a statement's rows become them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


class ReportError(ValueError):
    """The report cannot be made as asked; the message says why and what to change."""


@dataclass(frozen=True)
class TimeoutFigures:
    """One timeout of a step: in how many stays it fired, and their share."""

    name: str
    kind: str  # "action" | "transition"
    fired: int
    breach_rate: float | None  # fired / stays; None when the step had no stay


@dataclass(frozen=True)
class StepFigures:
    """Time in one step, over the stays that began in the window."""

    step: str
    label: str
    stays: int
    #: Of those stays, how many had not ended at the report's end (counted up to it).
    open: int
    median_hours: float | None
    p90_hours: float | None
    median_business_hours: float | None
    p90_business_hours: float | None
    timeouts: tuple[TimeoutFigures, ...]
    declared: bool = True


@dataclass(frozen=True)
class Report:
    model: Any
    since: datetime
    until: datetime
    steps: list[StepFigures]
    #: Why business hours are missing, when they are (``None`` when computed).
    business_hours_note: str | None = None
    #: Per SLA of the model (``report.slas``).
    slas: list[Any] = field(default_factory=list)


# Assembling the figures --------------------------------------------------------------


def assemble(model: Any, rows: list[tuple], business: bool) -> list[StepFigures]:
    """The statement's ``rows`` as figures: per step in declaration order (then steps only
    the log still names), the figures in hours and the timeouts' breach rates."""
    per_step: dict[str, tuple] = {}
    for row in rows:  # a terminal step's open stays are counted apart from its ended ones
        if row[0] == "step":
            stays, still_open, *seconds = row[3:]
            before = per_step.get(row[1], (0, 0))
            per_step[row[1]] = (before[0] + stays, before[1] + still_open, *seconds)
    fired = {(row[1], row[2]): row[3] for row in rows if row[0] == "fired"}
    workflow = model.workflow
    names = [*workflow.steps, *sorted(set(per_step) - set(workflow.steps))]
    return [_step_figures(model, name, per_step.get(name), fired, business) for name in names]


def _step_figures(
    model: Any, name: str, row: tuple | None, fired: dict, business: bool
) -> StepFigures:
    step = model.workflow.steps.get(name)
    stays, still_open = (int(row[0]), int(row[1])) if row else (0, 0)
    seconds = row[2:6] if row else (None,) * 4
    # To the millisecond: SQLite's instants are floats, a few microseconds off.
    hours = [None if value is None or not stays else round(value, 3) / 3600 for value in seconds]
    if step is not None and step.is_terminal:
        hours = [None] * 4
    if not business:
        hours[2:] = [None, None]
    timeouts = tuple(
        TimeoutFigures(
            timeout.name,
            "transition" if timeout.transition_to else "action",
            count := fired.get((name, timeout.name), 0),
            count / stays if stays else None,
        )
        for timeout in (step.timeouts if step else ())
    )
    return StepFigures(
        step=name,
        label=str(model.workflow.step_label(name)) if step else name,
        stays=stays,
        open=still_open,
        median_hours=hours[0],
        p90_hours=hours[1],
        median_business_hours=hours[2],
        p90_business_hours=hours[3],
        timeouts=timeouts,
        declared=step is not None,
    )
