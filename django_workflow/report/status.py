"""Where records stand, per model: how many in each step, overdue, halted.

What an operator asks first thing in the morning; the admin's "Workflows"
page and the changelist's status filter read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import router
from django.db.models import Count, Min, Q
from django.utils import timezone

from ..model.columns import NEXT_DUE_AT, STATE_ENTERED_AT, WORKFLOW_VERSION
from ..reading import attempts_read
from ..reading.key_lists import among
from ..reading.owed_effects_read import pending
from ..work import names
from . import StepFigures, time_in_step
from .slas import open_clocks as open_clocks  # the overview's SLA line

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
    db = router.db_for_read(model)
    rows = attempts_read.rows(model, db).filter(halted=True, work__startswith=names.STEP_PREFIX)
    effects = pending(model, db).filter(due_at__isnull=True).values_list("object_id", flat=True)
    return halted_among(model, rows.values_list("work", "object_id"), effects)


def halted_among(model: Any, stopped: Iterable[tuple[str, str]], owing: Iterable[str]) -> Any:
    """``halted``, given the model's halted automatic-step attempts (``(work, object_id)``)
    and the object ids of the ``on_enter`` effects whose attempts ran out."""
    return model._base_manager.filter(halted_condition(model, stopped, owing))


def halted_condition(model: Any, stopped: Iterable[tuple[str, str]], owing: Iterable[str]) -> Q:
    """The condition ``halted_among`` filters on: a record in the step whose attempts ran
    out, or owing an effect whose attempts ran out."""
    by_step: dict[str, list[Any]] = {}
    for work, object_id in stopped:
        step = names.automatic_step(work)
        by_step.setdefault(step, []).append(model._meta.pk.to_python(object_id))
    condition = Q(pk__in=[])
    for step, keys in by_step.items():
        condition |= Q(**{model.workflow.state_attribute: step}) & among("pk", keys)
    keys = {model._meta.pk.to_python(object_id) for object_id in owing}
    if keys:
        condition |= among("pk", keys)
    return condition


def step_statuses(model: Any, now: datetime | None = None) -> list[StepStatus]:
    """Each declared step in declaration order, then any step only the table still has."""
    state = model.workflow.state_attribute
    counts = {
        row[state]: row
        for row in model._base_manager.order_by()
        .values(state)
        .annotate(records=Count("pk"), oldest=Min(STATE_ENTERED_AT))
    }
    late = _per_step(overdue(model, now), state)
    stuck = _per_step(halted(model), state)
    return listed(model, counts, late, stuck)


def listed(
    model: Any, counts: dict[str, dict[str, Any]], late: dict[str, int], stuck: dict[str, int]
) -> list[StepStatus]:
    """The ``StepStatus`` of each declared step, then of each other step in ``counts``
    (``{step: {"records": n, "oldest": entry}}``, ``oldest`` optional). Declared: by any
    version of the declaration."""
    steps = [name for name, _label in model.workflow.choices()]
    return [
        StepStatus(
            step=name,
            records=counts.get(name, {}).get("records", 0),
            overdue=late.get(name, 0),
            halted=stuck.get(name, 0),
            oldest_entry=counts.get(name, {}).get("oldest"),
            declared=name in steps,
        )
        for name in [*steps, *sorted(set(counts) - set(steps))]
    ]


def records_per_version(model: Any, using: str | None = None) -> dict[int, int]:
    """How many records run on each version of a model with versions: one query."""
    rows = model._base_manager.using(using).order_by(WORKFLOW_VERSION)
    return dict(rows.values_list(WORKFLOW_VERSION).annotate(records=Count("pk")))


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
