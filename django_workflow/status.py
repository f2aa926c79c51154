"""Where records stand, per model: how many in each step, overdue, halted.

What an operator asks first thing in the morning; the admin's "Workflows"
page and the changelist's status filter read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import router
from django.db.models import Count, Min, Q
from django.utils import timezone

from . import retrying
from .columns import NEXT_DUE_AT, STATE_ENTERED_AT
from .pending_effects import pending
from .report import StepFigures, time_in_step
from .report.slas import open_clocks as open_clocks  # the overview's SLA line
from .work import names

#: The window of the overview's time-in-step columns, in days up to now.
TIME_IN_STEP_DAYS = 30


@dataclass(frozen=True)
class StepStatus:
    step: str
    records: int
    overdue: int
    halted: int
    #: When the record that has waited longest entered the step.
    oldest_entry: datetime | None
    declared: bool


def overdue(model: Any, now: datetime | None = None) -> Any:
    """The records with a deadline of their current step that came due and has not fired
    (not counting one waiting for its retry, or halted)."""
    rows = model.workflow.queryset()
    if not model.workflow.has_deadlines:
        return rows.none()
    return rows.filter(**{f"{NEXT_DUE_AT}__lte": now or timezone.now()})


def halted(model: Any) -> Any:
    """The records whose automatic step stopped retrying, still in that step, and those
    owing an ``on_enter`` effect that stopped retrying, wherever they are now."""
    workflow = model.workflow
    db = router.db_for_read(model)
    rows = retrying.rows(model, db).filter(halted=True, work__startswith=names.STEP_PREFIX)
    by_step: dict[str, list[Any]] = {}
    for work, object_id in rows.values_list("work", "object_id"):
        step = names.automatic_step(work)
        by_step.setdefault(step, []).append(model._meta.pk.to_python(object_id))
    condition = Q(pk__in=[])
    for step, keys in by_step.items():
        condition |= Q(**{workflow.state_attribute: step}, pk__in=keys)
    effects = pending(model, db).filter(due_at__isnull=True).values_list("object_id", flat=True)
    owing = {model._meta.pk.to_python(object_id) for object_id in effects}
    if owing:
        condition |= Q(pk__in=owing)
    return model._base_manager.filter(condition)


def step_statuses(
    model: Any, now: datetime | None = None, *, records: dict[str, int] | None = None
) -> list[StepStatus]:
    """Each declared step in declaration order, then any step only the table still has.

    ``records``: the records per step, when the caller counted them (``records_in``);
    ``oldest_entry`` is then left empty."""
    state = model.workflow.state_attribute
    if records is None:
        counts = {
            row[state]: row
            for row in model._base_manager.order_by()
            .values(state)
            .annotate(records=Count("pk"), oldest=Min(STATE_ENTERED_AT))
        }
    else:
        counts = {step: {"records": count} for step, count in records.items()}
    late = _per_step(overdue(model, now), state)
    stuck = _per_step(halted(model), state)
    names = [*model.workflow.steps, *sorted(set(counts) - set(model.workflow.steps))]
    return [
        StepStatus(
            step=name,
            records=counts.get(name, {}).get("records", 0),
            overdue=late.get(name, 0),
            halted=stuck.get(name, 0),
            oldest_entry=counts.get(name, {}).get("oldest"),
            declared=name in model.workflow.steps,
        )
        for name in names
    ]


def records_in(model: Any, steps: list[str], *, others: bool = False) -> dict[str, int]:
    """The records in each of ``steps`` (``others=True``: in each step not among them),
    counted from the state index alone."""
    state = model.workflow.state_attribute
    chosen = {f"{state}__in": steps}
    rows = model._base_manager.exclude(**chosen) if others else model._base_manager.filter(**chosen)
    # COUNT(*), not of the key: the key is not in the state index, which then suffices.
    return dict(rows.order_by().values_list(state).annotate(records=Count("*")))


def _per_step(records: Any, state: str) -> dict[str, int]:
    return dict(records.order_by().values_list(state).annotate(Count("pk")))


def times_in_step(model: Any, now: datetime | None = None) -> dict[str, StepFigures]:
    """Per step, the time-in-step figures of the stays begun in the last
    ``TIME_IN_STEP_DAYS`` days (docs/report.md); none for a model that keeps no log."""
    if model.workflow.log is not True:
        return {}
    now = now or timezone.now()
    report = time_in_step(model, now - timedelta(days=TIME_IN_STEP_DAYS), now)
    return {figures.step: figures for figures in report.steps}
