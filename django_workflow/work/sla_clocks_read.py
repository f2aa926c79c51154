"""Service-level clocks (``Workflow.slas``): reading them, and what a step change does
to them.

A clock runs while the record is in one of its ``runs_in`` steps. Each SLA keeps one
number per record: the seconds it consumed before the current stay (in its own
time: calendar time, or working time for a target in business hours). While it runs
it has been running since the record entered its step, so ``state_entered_at`` is its
start and a step change adds the stay to the number in the move's own ``UPDATE``
(``leaving``); nothing restarts it. The warning and the breach are marked once per
record by the engine when they fire.

A low module: the engine writes what ``leaving`` computes, the kinds of work ask it
when an SLA falls due, ``record.sla()`` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from ..declaration import Sla
from ..durations import (
    BusinessHours,
    InvalidDuration,
    add_working_time,
    parse_duration,
    working_time_between,
)
from ..model.columns import STATE_ENTERED_AT, sla_breached_column, sla_consumed_column
from ..model.versions import workflow_of
from .record_time import calendar_of, working_hours, zone_of

RUNNING = "running"
PAUSED = "paused"
MET = "met"
BREACHED = "breached"


@dataclass(frozen=True)
class SlaState:
    """Where an SLA's clock stands for one record (``record.sla(name)``)."""

    name: str
    #: ``running``, ``paused``, ``met`` or ``breached``.
    state: str
    #: Clock time used so far (working time for a target in business hours).
    consumed: timedelta
    #: Clock time left before the target (never negative).
    remaining: timedelta
    #: When the target is (or was) reached while the clock runs; ``None`` while paused
    #: or stopped.
    due_at: datetime | None


def target(sla: Sla) -> timedelta | None:
    """The clock time ``sla`` allows, or ``None`` when its target cannot be a clock (the
    checks report it)."""
    try:
        duration = parse_duration(sla.target)
    except InvalidDuration:
        return None
    if isinstance(duration, BusinessHours):
        return duration.length
    return duration if isinstance(duration, timedelta) else None


def warns(sla: Sla) -> bool:
    """Whether ``warn_at`` is a usable share of the target (strictly between 0 and 1)."""
    share = sla.warn_at
    return isinstance(share, int | float) and not isinstance(share, bool) and 0 < share < 1


def in_business_hours(sla: Sla) -> bool:
    try:
        return isinstance(parse_duration(sla.target), BusinessHours)
    except InvalidDuration:
        return False


def runs_in(workflow: Any, sla: Sla, step: Any) -> bool:
    """Whether the clock runs in ``step``: one of ``runs_in``, and not terminal."""
    declared = workflow.steps.get(step)
    return step in sla.runs_in and declared is not None and not declared.is_terminal


def elapsed(record: Any, sla: Sla, start: datetime, end: datetime) -> timedelta:
    """The clock time between two instants for ``record``."""
    if end <= start:
        return timedelta(0)
    if not in_business_hours(sla):
        return end - start
    model = type(record)
    hours = working_hours(model)
    if hours is None:
        return timedelta(0)  # E068: no working hours, no business time
    return working_time_between(start, end, zone_of(record), calendar_of(record), hours)


def later(record: Any, sla: Sla, start: datetime, length: timedelta) -> datetime | None:
    """When ``length`` of clock time has run from ``start``, the clock running throughout."""
    if length <= timedelta(0):
        return start
    if not in_business_hours(sla):
        return start + length
    hours = working_hours(type(record))
    if hours is None:
        return None
    return add_working_time(start, length, zone_of(record), calendar_of(record), hours)


def stored(record: Any, name: str) -> timedelta:
    """The clock time consumed before the current stay."""
    return timedelta(seconds=getattr(record, sla_consumed_column(name)) or 0)


def consumed(record: Any, name: str, now: datetime) -> timedelta:
    """The clock time consumed up to ``now``."""
    workflow = workflow_of(record)
    sla = workflow.slas[name]
    used = stored(record, name)
    if runs_in(workflow, sla, getattr(record, workflow.state_attribute)):
        used += elapsed(record, sla, getattr(record, STATE_ENTERED_AT), now)
    return used


def reached_at(record: Any, name: str, length: timedelta) -> datetime | None:
    """When the running clock reaches ``length`` consumed; ``None`` while it does not run.
    A clock already past it is due at its entry."""
    workflow = workflow_of(record)
    sla = workflow.slas[name]
    if not runs_in(workflow, sla, getattr(record, workflow.state_attribute)):
        return None
    entered = getattr(record, STATE_ENTERED_AT)
    if entered is None:
        return None
    return later(record, sla, entered, length - stored(record, name))


def owed_at(record: Any, name: str, length: timedelta) -> datetime | None:
    """When an alarm at ``length`` consumed falls due: as the running clock reaches it, or,
    in a step where the clock does not run, at once if a stay that ended before the alarm
    fired already reached it (another alarm or a timeout moved the record first)."""
    workflow = workflow_of(record)
    sla = workflow.slas[name]
    if runs_in(workflow, sla, getattr(record, workflow.state_attribute)):
        return reached_at(record, name, length)
    return getattr(record, STATE_ENTERED_AT) if stored(record, name) >= length else None


def state(record: Any, name: str, now: datetime | None = None) -> SlaState:
    """``record.sla(name)``: the clock's state, consumed, remaining and due instant."""
    workflow = workflow_of(record)
    if name not in workflow.clocked_slas:
        declared = ", ".join(workflow.clocked_slas) or "none"
        raise LookupError(f"{type(record).__name__} has no SLA {name!r}; it declares: {declared}.")
    now = now or timezone.now()
    sla = workflow.slas[name]
    allowed = target(sla) or timedelta(0)
    used = consumed(record, name, now)
    step = workflow.steps.get(getattr(record, workflow.state_attribute))
    over = used >= allowed or getattr(record, sla_breached_column(name)) is not None
    due = reached_at(record, name, allowed)
    if step is not None and step.is_terminal:
        phase = BREACHED if over else MET
    elif over:
        phase = BREACHED
    else:
        phase = RUNNING if due is not None else PAUSED
    return SlaState(name, phase, used, max(allowed - used, timedelta(0)), due)


def leaving(record: Any, from_step: str, entered: Any, changes: dict[str, Any]) -> dict[str, Any]:
    """A step change's ``changes`` with each running clock's stay added to what it
    consumed: written by the move's own ``UPDATE``. ``entered`` is when the record entered
    ``from_step``; the stay ends at the new entry instant. A self-loop ends a stay too."""
    workflow = workflow_of(record)
    if workflow.state_attribute not in changes or entered is None:
        return changes
    added = dict(changes)
    for name in running_in(workflow, from_step):
        sla = workflow.slas[name]
        stay = elapsed(record, sla, entered, changes[STATE_ENTERED_AT])
        # Whole seconds, rounded: truncated, every stay lost up to a second (100 stays of
        # 0.9 s added nothing); rounded, each is off by half a second at most, either way.
        added[sla_consumed_column(name)] = round((stored(record, name) + stay).total_seconds())
    return added


def running_in(workflow: Any, step: Any) -> list[str]:
    """The SLAs whose clocks run in ``step``."""
    return [name for name, sla in workflow.clocked_slas.items() if runs_in(workflow, sla, step)]
