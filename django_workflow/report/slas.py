"""Service levels in the report: per SLA of the model, the clocks that stopped in the
window (met or breached, and the median clock time they consumed) and the open ones now
(running, paused, already breached). Read from the records' SLA columns: one aggregate
query per SLA and one column of the stopped clocks for the median."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from statistics import median
from typing import Any

from django.db.models import Count, Q

from ..columns import STATE_ENTERED_AT, sla_breached_column, sla_consumed_column
from ..service_levels import target


@dataclass(frozen=True)
class SlaFigures:
    """One SLA: its clocks stopped at a terminal step in the window, and the open ones."""

    name: str
    target: str
    met: int
    breached: int
    #: Of the clocks stopped in the window, the median clock time consumed, in hours.
    median_hours: float | None
    running: int
    paused: int
    #: Open clocks whose breach already fired (counted in running or paused too).
    breached_open: int


def sla_figures(model: Any, since: datetime, until: datetime, db: str) -> list[SlaFigures]:
    workflow = model.workflow
    state = workflow.state_attribute
    terminal = [name for name, step in workflow.steps.items() if step.is_terminal]
    open_steps = [name for name in workflow.steps if name not in terminal]
    stopped = Q(**{f"{state}__in": terminal, f"{STATE_ENTERED_AT}__gte": since}) & Q(
        **{f"{STATE_ENTERED_AT}__lt": until}
    )
    figures = []
    for name, sla in workflow.clocked_slas.items():
        allowed = target(sla)
        if allowed is None:
            continue  # E070
        consumed, mark = sla_consumed_column(name), sla_breached_column(name)
        over = Q(**{f"{mark}__isnull": False}) | Q(**{f"{consumed}__gte": allowed.total_seconds()})
        running = Q(**{f"{state}__in": [s for s in open_steps if s in sla.runs_in]})
        paused = Q(**{f"{state}__in": [s for s in open_steps if s not in sla.runs_in]})
        counts = model._base_manager.using(db).aggregate(
            met=Count("pk", filter=stopped & ~over),
            breached=Count("pk", filter=stopped & over),
            running=Count("pk", filter=running),
            paused=Count("pk", filter=paused),
            breached_open=Count("pk", filter=(running | paused) & Q(**{f"{mark}__isnull": False})),
        )
        seconds = model._base_manager.using(db).filter(stopped).values_list(consumed, flat=True)
        values = list(seconds)
        figures.append(
            SlaFigures(
                name=name,
                target=str(sla.target),
                median_hours=median(values) / 3600 if values else None,
                **counts,
            )
        )
    return figures
