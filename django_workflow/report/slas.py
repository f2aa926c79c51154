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

from ..model.columns import STATE_ENTERED_AT, sla_breached_column, sla_consumed_column
from ..work.sla_clocks_read import target


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
    stopped = _stopped(model, since, until)
    opened = open_clocks(model, db)
    figures = []
    for name, sla in model.workflow.clocked_slas.items():
        if name not in opened:
            continue  # E070: no target, no clock
        over = _over(name, sla)
        rows = model._base_manager.using(db)
        counts = rows.aggregate(
            met=Count("pk", filter=stopped & ~over), breached=Count("pk", filter=stopped & over)
        )
        values = list(rows.filter(stopped).values_list(sla_consumed_column(name), flat=True))
        figures.append(
            SlaFigures(
                name=name,
                target=str(sla.target),
                median_hours=median(values) / 3600 if values else None,
                **counts,
                **opened[name],
            )
        )
    return figures


def open_clocks(model: Any, db: str | None = None) -> dict[str, dict[str, int]]:
    """Per SLA, the records in a non-terminal step now: ``running``, ``paused``, and
    ``breached_open`` (their breach fired), one aggregate query per SLA."""
    workflow = model.workflow
    state = workflow.state_attribute
    open_steps = [name for name, step in workflow.steps.items() if not step.is_terminal]
    counts = {}
    for name, sla in workflow.clocked_slas.items():
        if target(sla) is None:
            continue
        running = Q(**{f"{state}__in": [s for s in open_steps if s in sla.runs_in]})
        paused = Q(**{f"{state}__in": [s for s in open_steps if s not in sla.runs_in]})
        fired = Q(**{f"{sla_breached_column(name)}__isnull": False})
        counts[name] = model._base_manager.using(db).aggregate(
            running=Count("pk", filter=running),
            paused=Count("pk", filter=paused),
            breached_open=Count("pk", filter=(running | paused) & fired),
        )
    return counts


def _stopped(model: Any, since: datetime, until: datetime) -> Q:
    """Records that entered a terminal step in ``[since, until)``."""
    workflow = model.workflow
    terminal = [name for name, step in workflow.steps.items() if step.is_terminal]
    return Q(
        **{
            f"{workflow.state_attribute}__in": terminal,
            f"{STATE_ENTERED_AT}__gte": since,
            f"{STATE_ENTERED_AT}__lt": until,
        }
    )


def _over(name: str, sla: Any) -> Q:
    """A clock breached: its breach fired, or a past stay reached the target."""
    allowed = target(sla)
    consumed = Q(**{f"{sla_consumed_column(name)}__gte": allowed.total_seconds()})
    return Q(**{f"{sla_breached_column(name)}__isnull": False}) | consumed
