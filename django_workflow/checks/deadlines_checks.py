"""Deadlines: timeouts and every, their anchors, durations, columns and calculations."""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from croniter import croniter
from django.db import models

from ..declaration import Every, Timeout
from ..durations import BusinessDays, InvalidDuration, parse_duration, shortest
from ..model.columns import STATE_ENTERED_AT
from ..model.compiled import CompiledWorkflow
from ..model.generation import count_columns, deadline_columns
from ..work import counts_firings
from ..worker.schedulers import SCHEDULERS
from .common import Messages, check_method, error, field, warning, where


def check_deadlines(model: Any, workflow: CompiledWorkflow) -> Messages:
    for step_name, step in workflow.steps.items():
        for timeout in step.timeouts:
            yield from _check_timeout(model, workflow, step_name, timeout)
        for every in step.everies:
            yield from _check_every(model, workflow, step_name, every)
    yield from _check_columns(model, workflow)
    yield from _check_calculations(model, workflow)


def _check_timeout(model: Any, workflow: CompiledWorkflow, step: str, timeout: Timeout) -> Messages:
    place = where(step, f"timeout {timeout.name!r}")
    yield from _check_timeout_shape(model, place, timeout)
    for option in ("field", "fire_at"):
        anchor = getattr(timeout, option)
        if anchor is not None:
            yield from _check_anchor(model, workflow, place, option, anchor)
    if timeout.action is not None:
        yield from check_method(model, place, timeout.action)
    if timeout.retry is not None and timeout.action is None:
        yield error(model, f"{place} declares retry but runs no action.", "Remove retry.", "E022")
    if timeout.fire_after is not None:
        yield from _check_deadline_duration(
            model, workflow, place, "fire_after", timeout.fire_after, timeout
        )
    yield from _check_cron(model, place, timeout.check_interval)


def _check_timeout_shape(model: Any, place: str, timeout: Timeout) -> Messages:
    """E040 to E042: one way to say when, one thing to do."""
    if (timeout.fire_after is None) == (timeout.fire_at is None):
        yield error(
            model,
            f"{place} needs exactly one of fire_after or fire_at.",
            "fire_after='2d' counts from an anchor; fire_at='field' names the instant itself.",
            "E040",
        )
    if timeout.fire_at is not None and timeout.field is not None:
        yield error(
            model,
            f"{place} has both fire_at and field.",
            "fire_at already names the field holding the instant; remove field.",
            "E041",
        )
    if (timeout.action is None) == (timeout.transition_to is None):
        yield error(
            model,
            f"{place} needs exactly one of action or transition_to.",
            "An action runs once per round and stays; transition_to moves the record.",
            "E042",
        )


def _check_every(model: Any, workflow: CompiledWorkflow, step: str, every: Every) -> Messages:
    place = where(step, f"every {every.name!r}")
    if every.action is None:
        yield error(
            model,
            f"{place} has no action.",
            "An every runs an action on an interval; to leave the step, use a Timeout.",
            "E046",
        )
    else:
        yield from check_method(model, place, every.action)
    yield from _check_every_schedule(model, workflow, place, every)
    yield from _check_every_limits(model, place, every)
    if every.last_fired_field in (STATE_ENTERED_AT, workflow.state_attribute):
        yield error(
            model,
            f"{place}: last_fired_field {every.last_fired_field!r} is written by the workflow.",
            "Name a column of its own, or leave last_fired_field out.",
            "E045",
        )
    yield from _check_cron(model, place, every.check_interval)


def _check_every_schedule(
    model: Any, workflow: CompiledWorkflow, place: str, every: Every
) -> Messages:
    """E049: an interval or a cron, not both; E050 a cron croniter cannot read; E047."""
    if (every.interval is None) == (every.cron is None):
        yield error(
            model,
            f"{place} needs exactly one of interval or cron.",
            "interval='2d' fires every two days after the entry; cron='0 9 * * mon-fri' "
            "fires at those local wall-clock times.",
            "E049",
        )
    interval = until = None
    if every.cron is not None:
        yield from _check_every_cron(model, workflow, place, every)
    elif every.interval is not None:
        interval = yield from _check_deadline_duration(
            model, workflow, place, "interval", every.interval, every
        )
    if every.until is not None:
        until = yield from _parsed(model, place, "until", every.until)
    if interval is not None and until is not None and _days(until) <= _days(interval):
        yield error(
            model,
            f"{place}: until ({every.until!r}) is not longer than interval ({every.interval!r}).",
            "until must be strictly longer than interval, or the every can never fire.",
            "E047",
        )


def _check_every_cron(model: Any, workflow: CompiledWorkflow, place: str, every: Every) -> Messages:
    """E050 an unreadable cron; W001 a cron firing more often than its every is polled."""
    if not _readable_cron(every.cron):
        yield error(
            model,
            f"{place}: cron {every.cron!r} is not a valid cron expression.",
            "Write five fields, minute hour day-of-month month day-of-week, in the "
            'record\'s local time: "0 9 * * mon-fri" is 09:00 on weekdays.',
            "E050",
        )
    elif workflow.scheduler == "polling":
        cron = every.check_interval or workflow.check_interval
        gap = _cron_gap(every.cron, min)
        yield from _warn_check_interval(model, place, f"cron {every.cron!r}", gap, cron)


def _check_every_limits(model: Any, place: str, every: Every) -> Messages:
    """E051 a ``times`` that is no positive int; E052 ``business_days_only`` misused."""
    if every.times is not None and not counts_firings(every):
        yield error(
            model,
            f"{place}: times {every.times!r} is not a positive whole number.",
            "times=4 stops after four firings per stay in the step; leave it out for no limit.",
            "E051",
        )
    if not isinstance(every.business_days_only, bool):
        yield error(
            model,
            f"{place}: business_days_only {every.business_days_only!r} is not True or False.",
            "Write business_days_only=True to skip the firings that fall on days off.",
            "E052",
        )
    elif every.business_days_only and every.cron is None:
        yield error(
            model,
            f"{place}: business_days_only=True needs a cron.",
            "It skips a cron's firings on days off; with an interval, count business "
            "days in the interval itself (interval='2bd').",
            "E052",
        )


def _parsed(model: Any, place: str, option: str, value: Any) -> Any:
    """The duration ``value`` (E026 and ``None`` when it cannot be read)."""
    try:
        return parse_duration(value)
    except InvalidDuration as problem:
        yield error(model, f"{place}: {option} {problem}", "", "E026")
        return None


def _check_deadline_duration(
    model: Any, workflow: CompiledWorkflow, place: str, option: str, value: Any, entity: Any
) -> Any:
    """E048 below the scheduler's floor, W001 shorter than its poll; returns the duration."""
    duration = yield from _parsed(model, place, option, value)
    if duration is None or getattr(entity, "self_scheduled", False):
        return duration
    scheduler = workflow.scheduler if workflow.scheduler in SCHEDULERS else "polling"
    floor = SCHEDULERS[scheduler].floor
    if isinstance(duration, timedelta) and duration < floor:
        yield error(
            model,
            f"{place}: {option} {value!r} is shorter than the {scheduler} scheduler can "
            f"honour ({int(floor.total_seconds())} s).",
            "Use scheduler = 'precise' for sub-minute deadlines, or self_scheduled=True "
            "and run it with run_work() yourself.",
            "E048",
        )
    elif scheduler == "polling":
        cron = entity.check_interval or workflow.check_interval
        yield from _warn_check_interval(model, place, f"{option} {value!r}", duration, cron)
    return duration


def _warn_check_interval(model: Any, place: str, what: str, duration: Any, cron: Any) -> Messages:
    period = _cron_period(cron)
    if period is not None and timedelta(days=_days(duration)) < period:
        yield warning(
            model,
            f"{place}: {what} is shorter than the period of its check_interval {cron!r} "
            f"({period}); it will fire late.",
            "Set a shorter check_interval on the workflow or on this deadline.",
            "W001",
        )


def _cron_period(cron: Any) -> timedelta | None:
    """The longest gap between two consecutive runs of a cron expression."""
    if not croniter.is_valid(str(cron)):
        return None
    return _cron_gap(str(cron), max)


def _cron_gap(cron: str, pick: Any) -> timedelta:
    """The longest (``max``) or shortest (``min``) gap between a cron's first runs."""
    runs = croniter(cron, datetime(2026, 1, 1))
    instants = [runs.get_next(datetime) for _ in range(8)]
    return pick(later - earlier for earlier, later in pairwise(instants))


def _days(duration: Any) -> float:
    if isinstance(duration, BusinessDays):
        return float(duration.days)
    return shortest(duration) / timedelta(days=1)


def _readable_cron(cron: Any) -> bool:
    """Five fields croniter reads (or one of its ``@daily`` names): croniter also reads a
    sixth field, seconds, which no deadline is polled often enough to honour."""
    if not isinstance(cron, str) or not croniter.is_valid(cron):
        return False
    return cron.strip().startswith("@") or len(cron.split()) == 5


def _check_cron(model: Any, place: str, cron: Any) -> Messages:
    if cron is not None and not _readable_cron(cron):
        yield error(
            model,
            f"{place}: check_interval {cron!r} is not a valid cron expression.",
            'Write five cron fields, e.g. "*/5 * * * *".',
            "E023",
        )


def _check_anchor(
    model: Any, workflow: CompiledWorkflow, place: str, option: str, anchor: Any
) -> Messages:
    """E043: an anchor is a DateTimeField of the model or a calculation."""
    if isinstance(anchor, str) and anchor in workflow.calculations:
        return
    anchor_field = field(model, anchor) if isinstance(anchor, str) else None
    if not isinstance(anchor_field, models.DateTimeField):
        yield error(
            model,
            f"{place}: {option} {anchor!r} is not a DateTimeField of the model nor a "
            "name in Workflow.calculations.",
            "Name a DateTimeField, or declare the expression in Workflow.calculations.",
            "E043",
        )


def _check_columns(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E044: each generated column has one writer and, if declared by hand, the right type."""
    writers: dict[str, list[str]] = {}
    for column, label in deadline_columns(workflow):
        writers.setdefault(column, []).append(label.split()[1])
    for column, names in writers.items():
        if len(names) > 1:
            yield error(
                model,
                f"deadlines {', '.join(names)} would all write the column {column!r}.",
                "Rename a step or deadline, or give an every its own last_fired_field.",
                "E044",
            )
        declared = field(model, column)
        if declared is not None and not (
            isinstance(declared, models.DateTimeField) and declared.null
        ):
            yield error(
                model,
                f"the column {column!r} that {names[0]} writes is declared as "
                f"{type(declared).__name__}(null={declared.null}); "
                "it must be a nullable DateTimeField.",
                "Remove the field so it is generated, or make it DateTimeField(null=True).",
                "E044",
            )
    for column, label in count_columns(workflow):
        declared = field(model, column)
        if declared is not None and not (
            isinstance(declared, models.IntegerField) and declared.null
        ):
            yield error(
                model,
                f"the column {column!r} that {label.split()[2]} counts its firings in is "
                f"declared as {type(declared).__name__}(null={declared.null}); "
                "it must be a nullable integer field.",
                "Remove the field so it is generated, or make it PositiveIntegerField(null=True).",
                "E044",
            )


def _check_calculations(model: Any, workflow: CompiledWorkflow) -> Messages:
    for name, expression in workflow.calculations.items():
        if not hasattr(expression, "resolve_expression"):
            yield error(
                model,
                f"calculation {name!r} is {expression!r}, not a database expression.",
                "Write an expression such as F('submitted_at') + timedelta(days=2).",
                "E027",
            )
        elif field(model, name) is not None:
            yield error(
                model,
                f"calculation {name!r} has the name of a field of the model.",
                "Give the calculation a name of its own.",
                "E027",
            )
