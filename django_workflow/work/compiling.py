"""Compiling a workflow's declaration into its units of work, one kind per class."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ..conf import workflow_settings
from ..declaration import Every, Retry, Sla, Step, Timeout
from ..durations import InvalidDuration, parse_duration, parse_timedelta
from ..model.columns import (
    ASSIGNED_AT,
    ON_ENTER,
    STATE_ENTERED_AT,
    fired_column,
    fired_count_column,
    last_fired_column,
    sla_breached_column,
    sla_consumed_column,
    sla_warned_column,
)
from . import names
from .base import Deadline, Duration, Work
from .every import EveryWork
from .join import JoinRecheck
from .release import ReleaseWork
from .sla import BREACH, WARN, SlaAlarm
from .sla_clocks_read import target, warns
from .step import EntryWork, StepWork
from .timeout import ActionTimeout, TransitionTimeout


def soonest_at_entry(works: tuple[Work, ...]) -> tuple[Work, ...]:
    """Of a step's deadlines, those that can be the soonest when a record enters it.

    Timeouts counted from the entry by the same kind of duration (calendar time,
    or business days in the record's calendar) fall due in the order of their
    lengths, and none has fired yet: only the shortest of each kind can come
    first. Every other deadline is kept.
    """
    shortest: dict[type, Work] = {}
    kept = []
    for work in works:
        length = work.entry_length()
        if length is None:
            kept.append(work)
            continue
        best = shortest.get(type(length))
        if best is None or length < best.entry_length():
            shortest[type(length)] = work
    return (*kept, *shortest.values())


def compile_works(workflow: Any) -> tuple[Work, ...]:
    """Every unit of work of a compiled workflow, in declaration order."""
    works: list[Work] = []
    for step_name, step in workflow.steps.items():
        if step.is_automatic:
            works.append(_step_work(workflow, step_name, step))
        if step.on_enter is not None:
            works.append(_entry_work(workflow, step_name, step))
        for deadline in step.deadlines:
            works.append(_deadline_work(workflow, step_name, step, deadline))
        if step.joins:
            works.append(_join_work(workflow, step_name))
        if releases(workflow, step):
            works.extend(_release_work(workflow, step_name, step))
    for name, sla in workflow.clocked_slas.items():
        works.extend(_sla_alarms(workflow, name, sla))
    if workflow.versions is not None:  # each version's works find its own records
        version = workflow.version
        works = [replace(w, name=names.versioned(w.name, version), version=version) for w in works]
    return tuple(works)


def _sla_alarms(workflow: Any, name: str, sla: Sla) -> list[Work]:
    """The warning (with ``warn_at``) and the breach of an SLA, in each non-terminal step
    (where the clock does not run, an alarm a past stay made due fires there); none when
    its target cannot be read (the checks report it)."""
    allowed = target(sla)
    if allowed is None:
        return []
    alarms = [(BREACH, allowed, sla.on_breach, sla_breached_column(name))]
    if warns(sla):
        alarms.insert(0, (WARN, allowed * sla.warn_at, sla.on_warn, sla_warned_column(name)))
    works: list[Work] = []
    for step_name, step in workflow.steps.items():
        if step.is_terminal:
            continue
        for alarm, at, handler, mark in alarms:
            calls_transition = handler in workflow.transition_names
            works.append(
                SlaAlarm(
                    name=names.sla_work(step_name, name, alarm),
                    entity=f"{name}.{alarm}",
                    deadline=Deadline(sla_consumed_column(name), parse_duration(sla.target)),
                    retry=Retry(),
                    check_interval=workflow.check_interval,
                    action=None if calls_transition or not isinstance(handler, str) else handler,
                    transition=handler if calls_transition else None,
                    sla=name,
                    alarm=alarm,
                    at=at,
                    mark=mark,
                    **_common(workflow, step_name),
                )
            )
    return works


def releases(workflow: Any, step: Step) -> bool:
    """Whether ``step`` lets go of claims held too long (``release_after``)."""
    return workflow.assignment and step.claim is True and step.release_after is not None


def _release_work(workflow: Any, name: str, step: Step) -> list[Work]:
    """The release of a claim step's ``release_after``; none when the duration cannot be
    read (the checks report it)."""
    try:
        after = parse_duration(step.release_after)
    except InvalidDuration:
        return []
    work = ReleaseWork(
        name=names.release_work(name),
        entity="release_after",
        deadline=Deadline(ASSIGNED_AT, after),
        retry=Retry(),
        check_interval=workflow.check_interval,
        **_common(workflow, name),
    )
    return [work]


def _common(workflow: Any, step: str) -> dict[str, Any]:
    return {
        "model_label": workflow.model._meta.label,
        "step": step,
        "state_attribute": workflow.state_attribute,
        "queue": workflow.queue,
        "scheduler": workflow.scheduler,
    }


def _step_work(workflow: Any, name: str, step: Step) -> Work:
    return StepWork(
        name=names.step_work(name),
        entity=name,
        deadline=None,
        retry=step.retry or Retry(),
        check_interval=workflow.check_interval,
        action=step.action,
        time_limit=_time_limit(step),
        **_common(workflow, name),
    )


def _entry_work(workflow: Any, name: str, step: Step) -> Work:
    return EntryWork(
        name=names.entry_work(name),
        entity=ON_ENTER,
        deadline=None,
        retry=step.retry or Retry(),
        check_interval=workflow.check_interval,
        action=step.on_enter,
        time_limit=_time_limit(step),
        **_common(workflow, name),
    )


def _join_work(workflow: Any, name: str) -> Work:
    return JoinRecheck(
        name=names.join_work(name),
        entity=name,
        deadline=Deadline(STATE_ENTERED_AT, join_recheck()),
        retry=Retry(),
        check_interval=workflow.check_interval,
        **_common(workflow, name),
    )


def join_recheck() -> timedelta:
    """``DJANGO_WORKFLOW["JOIN_RECHECK"]``: seconds between re-checks of a waiting parent."""
    seconds = workflow_settings.JOIN_RECHECK
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
        raise ImproperlyConfigured(
            f'DJANGO_WORKFLOW["JOIN_RECHECK"] must be a positive number of seconds, '
            f"not {seconds!r}."
        )
    return timedelta(seconds=seconds)


def _time_limit(step: Step) -> timedelta | None:
    try:
        return parse_timedelta(step.time_limit) if step.time_limit is not None else None
    except InvalidDuration:  # reported by the checks
        return None


def _deadline_work(workflow: Any, step_name: str, step: Step, entity: Timeout | Every) -> Work:
    check_interval = entity.check_interval or workflow.check_interval
    if isinstance(entity, Every):
        return _every_work(workflow, step_name, entity, check_interval)
    if entity.fire_at is not None:
        deadline = Deadline(entity.fire_at)
    else:
        deadline = Deadline(entity.field or STATE_ENTERED_AT, parse_duration(entity.fire_after))
    fired = fired_column(step_name, entity.name) if entity.action else None
    together = tuple(
        fired_column(step_name, other.name)
        for other in step.timeouts
        if fired and other.action == entity.action
    )
    kind = TransitionTimeout if entity.transition_to is not None else ActionTimeout
    return kind(
        name=names.timeout_work(step_name, entity.name),
        entity=entity.name,
        deadline=deadline,
        retry=entity.retry or Retry(),
        check_interval=check_interval,
        action=entity.action,
        transition_to=entity.transition_to,
        fired_field=fired,
        fired_together=together,
        self_scheduled=entity.self_scheduled,
        **_common(workflow, step_name),
    )


def _every_work(workflow: Any, step_name: str, every: Every, check_interval: str) -> Work:
    """An every on an ``interval`` or on a ``cron``; a malformed ``times`` is left out
    (the checks report it)."""
    times = every.times if counts_firings(every) else None
    return EveryWork(
        name=names.every_work(step_name, every.name),
        entity=every.name,
        deadline=Deadline(STATE_ENTERED_AT, _interval(every)),
        retry=Retry(),
        check_interval=check_interval,
        action=every.action,
        until=parse_duration(every.until) if every.until is not None else None,
        last_fired_field=last_fired_column(step_name, every),
        cron=every.cron,
        business_days_only=every.business_days_only is True,
        times=times,
        count_field=fired_count_column(step_name, every) if times is not None else None,
        **_common(workflow, step_name),
    )


def _interval(every: Every) -> Duration | None:
    if every.cron is not None or every.interval is None:  # both or neither: the checks say
        return None
    return parse_duration(every.interval)


def counts_firings(every: Any) -> bool:
    """Whether an every declares a usable ``times`` (a positive int), so its firings
    are counted in a column of their own."""
    times = getattr(every, "times", None)
    return isinstance(times, int) and not isinstance(times, bool) and times > 0
