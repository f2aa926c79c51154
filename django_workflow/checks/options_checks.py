"""The options of ``class Workflow:``: names, types, cron, time zone, holidays, own fields."""

from __future__ import annotations

import zoneinfo
from typing import Any

from croniter import croniter
from django.db import models

from ..durations import (
    BusinessHours,
    InvalidDuration,
    holiday_calendar,
    parse_duration,
    parse_working_hours,
)
from ..model.columns import STATE_ENTERED_AT
from ..model.compiled import OPTIONS, CompiledWorkflow, Problem
from ..model.triggers import WorkKind
from ..worker.schedulers import SCHEDULERS
from .common import Messages, error, field


def check_options(model: Any, workflow: CompiledWorkflow) -> Messages:
    yield from _check_unknown_options(model, workflow)
    yield from _check_option_types(model, workflow)
    yield from _check_cron(model, workflow)
    yield from _check_time_zone(model, workflow)
    yield from _check_holidays(model, workflow)
    yield from _check_working_hours(model, workflow)
    yield from _check_business_hours(model, workflow)


def _check_unknown_options(model: Any, workflow: CompiledWorkflow) -> Messages:
    for name in workflow.unknown_options:
        yield error(
            model,
            f"`Workflow.{name}` is not a workflow option.",
            f"Valid options are: {', '.join(OPTIONS)}. Steps are declared as `name = Step(...)`.",
            "E001",
        )


def _check_option_types(model: Any, workflow: CompiledWorkflow) -> Messages:
    problems = list(workflow.problems)
    if workflow.scheduler not in SCHEDULERS:
        names = " or ".join(repr(name) for name in SCHEDULERS)
        problems.append(Problem("scheduler", workflow.scheduler, names))
    for problem in problems:
        yield error(
            model,
            f"`Workflow.{problem.option}` is {problem.value!r}; it must be {problem.expected}.",
            f"Fix `{problem.option}` in the Workflow declaration.",
            "E027",
        )


def _check_cron(model: Any, workflow: CompiledWorkflow) -> Messages:
    if not croniter.is_valid(workflow.check_interval):
        yield error(
            model,
            f"check_interval {workflow.check_interval!r} is not a valid cron expression.",
            'Write five cron fields, e.g. "* * * * *" (every minute) or "0 * * * *" (hourly).',
            "E023",
        )


def _check_time_zone(model: Any, workflow: CompiledWorkflow) -> Messages:
    try:
        zoneinfo.ZoneInfo(workflow.time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        yield error(
            model,
            f"time_zone {workflow.time_zone!r} is not a known IANA time zone.",
            "Use a name such as 'UTC' or 'Europe/Zagreb'.",
            "E024",
        )
    name = workflow.time_zone_field
    if name is not None and field(model, name) is None:
        yield error(
            model,
            f"time_zone_field {name!r} is not a field of the model.",
            "Name a CharField holding an IANA time zone name per record.",
            "E024",
        )


def _check_holidays(model: Any, workflow: CompiledWorkflow) -> Messages:
    if not _is_holidays(model, workflow.holidays):
        yield error(
            model,
            f"holidays {workflow.holidays!r} is not a holidays calendar, an iterable of dates, "
            "nor the name of a model method returning one.",
            "Use holidays.country_holidays('HR'), a list of dates, or a method name.",
            "E027",
        )


def _check_working_hours(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E067: ``working_hours`` that cannot be read."""
    if workflow.working_hours is None:
        return
    try:
        parse_working_hours(workflow.working_hours)
    except InvalidDuration as problem:
        yield error(
            model,
            f"working_hours {problem}",
            "Write the local start and end of a working day, e.g. '09:00-17:00'.",
            "E067",
        )


def _check_business_hours(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E068: a duration in business hours (``bh``) on a workflow without working hours."""
    if workflow.working_hours is not None:
        return
    for place, duration in business_durations(workflow):
        if isinstance(duration, BusinessHours):
            yield error(
                model,
                f"{place} counts business hours ({duration.hours}bh), but the workflow "
                "declares no working_hours.",
                "Declare working_hours = '09:00-17:00' (local time) in the Workflow, or use "
                "another unit.",
                "E068",
            )


def business_durations(workflow: CompiledWorkflow) -> list[tuple[str, Any]]:
    """Every duration the workflow counts per record, with where it is declared."""
    found = []
    for work in workflow.works:
        if work.kind == WorkKind.SLA:
            continue  # the SLA's own target, below
        place = f"{work.step}.{work.entity}"
        if work.deadline is not None and work.deadline.fire_after is not None:
            found.append((place, work.deadline.fire_after))
        if work.until is not None:
            found.append((f"{place} until", work.until))
    for name, sla in workflow.slas.items():
        try:
            found.append((f"slas[{name!r}]", parse_duration(sla.target)))
        except InvalidDuration:
            continue  # E070
    return found


def _is_holidays(model: Any, spec: Any) -> bool:
    if isinstance(spec, str):
        return callable(getattr(model, spec, None))
    try:
        holiday_calendar(spec)
    except (TypeError, ValueError):
        return False
    return True


def check_own_fields(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E028: the state field and ``state_entered_at``, when the user declared them."""
    state = field(model, workflow.state_attribute)
    if state is not None and not isinstance(state, models.CharField):
        yield error(
            model,
            f"the state field {workflow.state_attribute!r} is a {type(state).__name__}, "
            "not a CharField.",
            "Remove the field so it is generated, or set `state_attribute` to another name.",
            "E028",
        )
    entered_at = field(model, STATE_ENTERED_AT)
    if entered_at is not None and not isinstance(entered_at, models.DateTimeField):
        yield error(
            model,
            f"{STATE_ENTERED_AT!r} is a {type(entered_at).__name__}, not a DateTimeField.",
            "Remove the field so it is generated, or make it a DateTimeField.",
            "E028",
        )
