"""The verifiers: ``manage.py check`` rejects declarations that cannot work.

One function per rule family; each returns ``CheckMessage``s naming the
model, the step and the entity, with a hint. The IDs are listed in
``docs/checks.md`` and never reused.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterator
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from croniter import croniter
from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import Q

from .columns import STATE_ENTERED_AT
from .compiled import OPTIONS, CompiledWorkflow, Problem
from .declaration import Every, Retry, Route, Step, Timeout, Transition, Undo
from .durations import (
    BusinessDays,
    InvalidDuration,
    holiday_calendar,
    parse_duration,
    parse_timedelta,
)
from .generation import STATE_MAX_LENGTH, is_generated
from .workflow_model import workflow_models

Messages = Iterator[checks.CheckMessage]
SCHEDULERS = ("polling", "precise")


def check_workflows(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    models_checked = workflow_models(app_configs, declared=False)
    for model in models_checked:
        messages.extend(check_model(model))
    if models_checked and app_configs is None:
        messages.extend(check_deployment(models_checked))
    return messages


def check_deployment(workflow_models: list[Any]) -> list[checks.CheckMessage]:
    """django-q2 and database settings that make workflows lose or repeat work."""
    from django.conf import settings
    from django.db import connections

    cluster = getattr(settings, "Q_CLUSTER", {}) or {}
    messages: list[checks.CheckMessage] = []

    def warn(message: str, hint: str, code: str) -> None:
        messages.append(checks.Warning(message, hint=hint, id=f"django_workflow.{code}"))

    if not cluster.get("max_attempts"):
        warn(
            "Q_CLUSTER has no max_attempts: django-q2 retries a failing task forever.",
            "Set Q_CLUSTER['max_attempts'], e.g. 3; workflows retry per Retry themselves.",
            "W002",
        )
    timeout, retry = cluster.get("timeout"), cluster.get("retry", 60)
    longest = max(
        (
            parse_timedelta(step.time_limit).total_seconds()
            for model in workflow_models
            if model.workflow is not None
            for step in model.workflow.steps.values()
            if step.time_limit is not None and _readable(step.time_limit)
        ),
        default=0,
    )
    if retry <= max(timeout or 0, longest):
        warn(
            f"Q_CLUSTER retry ({retry} s) is not longer than the task timeout ({timeout} s) "
            f"and the longest time_limit ({longest:.0f} s): a running task would be redelivered.",
            "Set Q_CLUSTER['retry'] above both.",
            "W003",
        )
    for alias in connections:
        settings_dict = connections[alias].settings_dict
        engine = settings_dict["ENGINE"]
        options = settings_dict.get("OPTIONS", {})
        if engine.endswith("sqlite3") and options.get("transaction_mode") != "IMMEDIATE":
            warn(
                f"SQLite database {alias!r} uses deferred transactions: the web process and "
                "the worker will fail with 'database is locked'.",
                "Set OPTIONS = {'transaction_mode': 'IMMEDIATE', 'timeout': 20}.",
                "W004",
            )
        if engine.endswith("postgresql") and not settings_dict.get("CONN_MAX_AGE"):
            warn(
                f"PostgreSQL database {alias!r} has CONN_MAX_AGE = 0: django-q2's ORM broker "
                "opens new connections for every task.",
                "Set CONN_MAX_AGE to 60 or more (or None).",
                "W005",
            )
    return messages


def _readable(value: Any) -> bool:
    try:
        parse_timedelta(value)
    except InvalidDuration:
        return False
    return True


def check_model(model: Any) -> list[checks.CheckMessage]:
    """Every message for one workflow model."""
    error = model.__dict__.get("_workflow_import_error")
    if error is not None:
        return [_error(model, f"the declaration could not be read: {error!r}.", "", "E002")]
    workflow = model.workflow
    if workflow is None:
        return [
            _error(
                model,
                "subclasses WorkflowModel but declares no inner `class Workflow:`.",
                "Declare the steps in an inner `class Workflow:`, or make the model abstract.",
                "E002",
            )
        ]
    messages: list[checks.CheckMessage] = []
    for rule in RULES:
        try:
            messages.extend(rule(model, workflow))
        except Exception as error:  # a declaration too odd for a rule still gets reported
            messages.append(
                _error(model, f"the declaration could not be checked: {error!r}.", "", "E002")
            )
    return messages


def _error(model: Any, message: str, hint: str, code: str) -> checks.Error:
    return checks.Error(
        f"{model._meta.label}: {message}",
        hint=hint or None,
        obj=model,
        id=f"django_workflow.{code}",
    )


def _where(step: str, entity: str = "") -> str:
    return f"step {step!r}" + (f", {entity}" if entity else "")


# Options --------------------------------------------------------------------


def check_options(model: Any, workflow: CompiledWorkflow) -> Messages:
    for name in workflow.unknown_options:
        yield _error(
            model,
            f"`Workflow.{name}` is not a workflow option.",
            f"Valid options are: {', '.join(OPTIONS)}. Steps are declared as `name = Step(...)`.",
            "E001",
        )
    yield from _check_option_types(model, workflow)
    if not croniter.is_valid(str(workflow.check_interval)):
        yield _error(
            model,
            f"check_interval {workflow.check_interval!r} is not a valid cron expression.",
            'Write five cron fields, e.g. "* * * * *" (every minute) or "0 * * * *" (hourly).',
            "E023",
        )
    yield from _check_time_zone(model, workflow)
    yield from _check_holidays(model, workflow)
    if workflow.undo is not None and workflow.log is not True:
        yield _error(
            model,
            "`undo` is set but `log` is not: undo reads the transition log.",
            "Set `log = True` in the Workflow, or remove `undo`.",
            "E025",
        )
    if isinstance(workflow.undo, Undo) and workflow.undo.within is not None:
        yield from _check_duration(model, "undo within", workflow.undo.within)


def _check_option_types(model: Any, workflow: CompiledWorkflow) -> Messages:
    problems = list(workflow.problems)
    if workflow.scheduler not in SCHEDULERS:
        problems.append(Problem("scheduler", workflow.scheduler, "'polling' or 'precise'"))
    for problem in problems:
        yield _error(
            model,
            f"`Workflow.{problem.option}` is {problem.value!r}; it must be {problem.expected}.",
            f"Fix `{problem.option}` in the Workflow declaration.",
            "E027",
        )


def _check_holidays(model: Any, workflow: CompiledWorkflow) -> Messages:
    spec = workflow.holidays
    if isinstance(spec, str):
        valid = callable(getattr(model, spec, None))
    else:
        try:
            holiday_calendar(spec)
            valid = True
        except (TypeError, ValueError):
            valid = False
    if not valid:
        yield _error(
            model,
            f"holidays {spec!r} is not a holidays calendar, an iterable of dates, nor the "
            "name of a model method returning one.",
            "Use holidays.country_holidays('HR'), a list of dates, or a method name.",
            "E027",
        )


def _check_time_zone(model: Any, workflow: CompiledWorkflow) -> Messages:
    try:
        zoneinfo.ZoneInfo(str(workflow.time_zone))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        yield _error(
            model,
            f"time_zone {workflow.time_zone!r} is not a known IANA time zone.",
            "Use a name such as 'UTC' or 'Europe/Zagreb'.",
            "E024",
        )
    field_name = workflow.time_zone_field
    if isinstance(field_name, str) and _field(model, field_name) is None:
        yield _error(
            model,
            f"time_zone_field {field_name!r} is not a field of the model.",
            "Name a CharField holding an IANA time zone name per record.",
            "E024",
        )


def check_state_field(model: Any, workflow: CompiledWorkflow) -> Messages:
    attribute = workflow.state_attribute
    if not isinstance(attribute, str):
        return
    field = _field(model, attribute)
    if field is not None and not isinstance(field, models.CharField):
        yield _error(
            model,
            f"the state field {attribute!r} is a {type(field).__name__}, not a CharField.",
            "Remove the field so it is generated, or set `state_attribute` to another name.",
            "E028",
        )
    entered_at = _field(model, STATE_ENTERED_AT)
    if entered_at is not None and not isinstance(entered_at, models.DateTimeField):
        yield _error(
            model,
            f"{STATE_ENTERED_AT!r} is a {type(entered_at).__name__}, not a DateTimeField.",
            "Remove the field so it is generated, or make it a DateTimeField.",
            "E028",
        )


# Steps ----------------------------------------------------------------------


def check_steps(model: Any, workflow: CompiledWorkflow) -> Messages:
    steps = workflow.steps
    if not any(not step.is_terminal for step in steps.values()):
        yield _error(
            model,
            "the workflow has no non-terminal step, so no record could ever move.",
            "Declare at least one step with transitions, an action or timeouts.",
            "E003",
        )
    initial = [name for name, step in steps.items() if step.initial is True]
    if len(initial) > 1:
        yield _error(
            model,
            f"several steps are marked initial: {', '.join(initial)}.",
            "Mark exactly one step with initial=True.",
            "E004",
        )
    for name in initial:
        if steps[name].is_terminal:
            yield _error(
                model,
                f"{_where(name)} is marked initial but is terminal.",
                "A record would start where it can never leave; mark another step initial.",
                "E005",
            )
    for name, step in steps.items():
        for rule in STEP_RULES:
            yield from rule(model, workflow, name, step)


def _check_step_names(model: Any, workflow: CompiledWorkflow, name: str, step: Step) -> Messages:
    if len(name) > STATE_MAX_LENGTH or name.startswith("_"):
        yield _error(
            model,
            f"{_where(name)}: a step name must not start with '_' and must fit "
            f"{STATE_MAX_LENGTH} characters.",
            "Rename the step.",
            "E029",
        )


def _check_terminal(model: Any, workflow: CompiledWorkflow, name: str, step: Step) -> Messages:
    if step.terminal is True and (step.children or step.action or step.on_success or step.on_error):
        yield _error(
            model,
            f"{_where(name)} is terminal=True but declares ways out.",
            "Remove its transitions, action, on_success and on_error, or drop terminal=True.",
            "E006",
        )


def _check_kind(model: Any, workflow: CompiledWorkflow, name: str, step: Step) -> Messages:
    if step.transitions and (step.action or step.on_success or step.on_error):
        yield _error(
            model,
            f"{_where(name)} has transitions and also action/on_success/on_error.",
            "A manual step waits for a person; move the action to an automatic step of its own.",
            "E007",
        )
    elif step.action and step.on_success is None:
        yield _error(
            model,
            f"{_where(name)} is automatic (action={step.action!r}) but has no on_success.",
            "Set on_success to a step name or a list of Route(...).",
            "E008",
        )
    elif step.action is None and (step.on_success is not None or step.on_error is not None):
        yield _error(
            model,
            f"{_where(name)} has on_success/on_error but no action.",
            "Name the model method to run with action='method_name'.",
            "E008",
        )
    elif step.kind == "wait" and not any(t.transition_to for t in step.timeouts):
        yield _error(
            model,
            f"{_where(name)} only waits, but none of its timeouts has transition_to: "
            "records could never leave it.",
            "Add a Timeout(..., transition_to='step'), or a transition.",
            "E011",
        )


def _check_children(model: Any, workflow: CompiledWorkflow, name: str, step: Step) -> Messages:
    for child in step.children:
        if not isinstance(child, Transition | Timeout | Every):
            yield _error(
                model,
                f"{_where(name)}: {child!r} is not a Transition, Timeout or Every.",
                "A step's positional arguments are Transition, Timeout and Every declarations.",
                "E019",
            )
    if step.retry is not None and not isinstance(step.retry, Retry):
        yield _error(model, f"{_where(name)}: retry={step.retry!r} is not a Retry.", "", "E019")
    for label, routes in (("on_success", step.routes),):
        yield from _check_routes(model, name, label, routes)
    for kind, children in (("transition", step.transitions), ("deadline", step.deadlines)):
        names = [child.name for child in children]
        for duplicate in sorted({n for n in names if names.count(n) > 1}, key=str):
            yield _error(
                model,
                f"{_where(name)} declares {kind} {duplicate!r} twice.",
                f"Give each {kind} of a step its own name.",
                "E015",
            )


def _check_routes(model: Any, step: str, entity: str, routes: tuple[Any, ...]) -> Messages:
    for route in routes:
        if not isinstance(route, Route):
            yield _error(model, f"{_where(step, entity)}: {route!r} is not a Route.", "", "E019")
        elif route.when is not None and not (isinstance(route.when, Q) or callable(route.when)):
            yield _error(
                model,
                f"{_where(step, entity)}: Route({route.to!r}) has when={route.when!r}.",
                "`when` is a Q object or a callable taking the record.",
                "E019",
            )
    unconditional = [i for i, r in enumerate(routes) if isinstance(r, Route) and r.when is None]
    if len(unconditional) > 1 or (unconditional and unconditional[0] != len(routes) - 1):
        yield _error(
            model,
            f"{_where(step, entity)}: an unconditional Route must be the only one and come last.",
            "Routes are tried in order; routes after an unconditional one can never match.",
            "E009",
        )


def _check_automatic(model: Any, workflow: CompiledWorkflow, name: str, step: Step) -> Messages:
    if step.action is not None and not callable(getattr(model, str(step.action), None)):
        yield _error(
            model,
            f"{_where(name)}: action {step.action!r} is not a method of the model.",
            f"Define `def {step.action}(self):` on {model.__name__}.",
            "E016",
        )
    routes = step.routes
    conditional = all(isinstance(r, Route) and r.when is not None for r in routes)
    if step.action and routes and step.on_error is None and conditional:
        yield _error(
            model,
            f"{_where(name)}: every on_success route is conditional and there is no "
            "on_error, so a record no route matches has no way out.",
            "Add an unconditional Route last, or set on_error.",
            "E010",
        )
    if step.retry is not None and step.action is None:
        yield _error(
            model,
            f"{_where(name)} declares retry but runs no action.",
            "Remove retry, or make the step automatic with action=...",
            "E022",
        )
    if isinstance(step.retry, Retry):
        yield from _check_retry(model, name, step.retry)
    if step.time_limit is not None:
        if step.action is None:
            yield _error(
                model,
                f"{_where(name)} declares time_limit but runs no action.",
                "Remove time_limit.",
                "E022",
            )
        yield from _check_duration(model, f"{_where(name)} time_limit", step.time_limit)


def _check_retry(model: Any, name: str, retry: Retry) -> Messages:
    attempts = retry.max_attempts
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
        yield _error(
            model,
            f"{_where(name)}: Retry max_attempts={attempts!r} must be a whole number, at least 1.",
            "max_attempts counts the first try too.",
            "E026",
        )
    if retry.backoff != "exponential":
        yield from _check_duration(model, f"{_where(name)} retry backoff", retry.backoff)


def _check_duration(model: Any, where: str, value: Any) -> Messages:
    try:
        parse_timedelta(value)
    except InvalidDuration as error:
        yield _error(model, f"{where}: {error}", "", "E026")


def _check_transitions(model: Any, workflow: CompiledWorkflow, name: str, step: Step) -> Messages:
    for transition in step.transitions:
        where = _where(name, f"transition {transition.name!r}")
        if (transition.to is None) == (not transition.routes):
            yield _error(
                model,
                f"{where} must have exactly one of `to` or routes.",
                "Write Transition('name', to='step') or Transition('name', Route(...), ...).",
                "E014",
            )
        yield from _check_routes(model, name, f"transition {transition.name!r}", transition.routes)
        for accepted in transition.accept:
            if not isinstance(accepted, str) or _field(model, accepted) is None:
                yield _error(
                    model,
                    f"{where} accepts {accepted!r}, which is not a field of the model.",
                    "List field names in accept=[...].",
                    "E020",
                )
            elif accepted in (workflow.state_attribute, STATE_ENTERED_AT):
                yield _error(
                    model,
                    f"{where} accepts {accepted!r}, which the workflow itself writes.",
                    "Remove it from accept=[...].",
                    "E020",
                )
        if transition.undoable is True and workflow.log is not True:
            yield _error(
                model,
                f"{where} is undoable but the workflow has no log.",
                "Set `log = True` in the Workflow: undo reads the transition log.",
                "E025",
            )


STEP_RULES = (
    _check_step_names,
    _check_terminal,
    _check_kind,
    _check_children,
    _check_automatic,
    _check_transitions,
)


# Deadlines ------------------------------------------------------------------

#: The shortest deadline each scheduler can honour.
FLOORS = {"polling": timedelta(seconds=60), "precise": timedelta(seconds=1)}


def check_deadlines(model: Any, workflow: CompiledWorkflow) -> Messages:
    for step_name, step in workflow.steps.items():
        for timeout in step.timeouts:
            yield from _check_timeout(model, workflow, step_name, timeout)
        for every in step.everies:
            yield from _check_every(model, workflow, step_name, every)
    yield from _check_columns(model, workflow)
    yield from _check_calculations(model, workflow)


def _check_timeout(model: Any, workflow: CompiledWorkflow, step: str, timeout: Timeout) -> Messages:
    where = _where(step, f"timeout {timeout.name!r}")
    if (timeout.fire_after is None) == (timeout.fire_at is None):
        yield _error(
            model,
            f"{where} needs exactly one of fire_after or fire_at.",
            "fire_after='2d' counts from an anchor; fire_at='field' names the instant itself.",
            "E040",
        )
    if timeout.fire_at is not None and timeout.field is not None:
        yield _error(
            model,
            f"{where} has both fire_at and field.",
            "fire_at already names the field holding the instant; remove field.",
            "E041",
        )
    if (timeout.action is None) == (timeout.transition_to is None):
        yield _error(
            model,
            f"{where} needs exactly one of action or transition_to.",
            "An action runs once per round and stays; transition_to moves the record.",
            "E042",
        )
    for option in ("field", "fire_at"):
        anchor = getattr(timeout, option)
        if anchor is not None:
            yield from _check_anchor(model, workflow, where, option, anchor)
    if timeout.action is not None:
        yield from _check_method(model, where, timeout.action)
    if timeout.retry is not None and timeout.action is None:
        yield _error(model, f"{where} declares retry but runs no action.", "Remove retry.", "E022")
    if timeout.fire_after is not None:
        yield from _check_deadline_duration(
            model, workflow, where, "fire_after", timeout.fire_after, timeout
        )
    yield from _check_cron(model, where, timeout.check_interval)


def _check_every(model: Any, workflow: CompiledWorkflow, step: str, every: Every) -> Messages:
    where = _where(step, f"every {every.name!r}")
    if every.action is None:
        yield _error(
            model,
            f"{where} has no action.",
            "An every runs an action on an interval; to leave the step, use a Timeout.",
            "E046",
        )
    else:
        yield from _check_method(model, where, every.action)
    interval = yield from _check_deadline_duration(
        model, workflow, where, "interval", every.interval, every
    )
    until = None
    if every.until is not None:
        until = yield from _parsed(model, where, "until", every.until)
    if interval is not None and until is not None and _days(until) <= _days(interval):
        yield _error(
            model,
            f"{where}: until ({every.until!r}) is not longer than interval ({every.interval!r}).",
            "until must be strictly longer than interval, or the every can never fire.",
            "E047",
        )
    reserved = (STATE_ENTERED_AT, workflow.state_attribute)
    if every.last_fired_field in reserved:
        yield _error(
            model,
            f"{where}: last_fired_field {every.last_fired_field!r} is written by the workflow.",
            "Name a column of its own, or leave last_fired_field out.",
            "E045",
        )
    yield from _check_cron(model, where, every.check_interval)


def _check_method(model: Any, where: str, action: Any) -> Messages:
    if not callable(getattr(model, str(action), None)):
        yield _error(
            model,
            f"{where}: action {action!r} is not a method of the model.",
            f"Define `def {action}(self):` on {model.__name__}.",
            "E016",
        )


def _parsed(model: Any, where: str, option: str, value: Any) -> Any:
    try:
        return parse_duration(value)
    except InvalidDuration as error:
        yield _error(model, f"{where}: {option} {error}", "", "E026")
        return None


def _check_deadline_duration(
    model: Any, workflow: CompiledWorkflow, where: str, option: str, value: Any, entity: Any
) -> Any:
    duration = yield from _parsed(model, where, option, value)
    if duration is None or getattr(entity, "self_scheduled", False):
        return duration
    scheduler = workflow.scheduler if workflow.scheduler in FLOORS else "polling"
    floor = FLOORS[scheduler]
    if isinstance(duration, timedelta) and duration < floor:
        yield _error(
            model,
            f"{where}: {option} {value!r} is shorter than the {scheduler} scheduler can "
            f"honour ({int(floor.total_seconds())} s).",
            "Use scheduler = 'precise' for sub-minute deadlines, or self_scheduled=True "
            "and run it with run_work() yourself.",
            "E048",
        )
    elif scheduler == "polling":
        yield from _warn_check_interval(model, workflow, where, option, value, duration, entity)
    return duration


def _warn_check_interval(
    model: Any,
    workflow: CompiledWorkflow,
    where: str,
    option: str,
    value: Any,
    duration: Any,
    entity: Any,
) -> Messages:
    cron = entity.check_interval or workflow.check_interval
    period = _cron_period(cron)
    if period is not None and timedelta(days=_days(duration)) < period:
        yield checks.Warning(
            f"{model._meta.label}: {where}: {option} {value!r} is shorter than the period "
            f"of its check_interval {cron!r} ({period}); it will fire late.",
            hint="Set a shorter check_interval on the workflow or on this deadline.",
            obj=model,
            id="django_workflow.W001",
        )


def _cron_period(cron: Any) -> timedelta | None:
    """The longest gap between two consecutive runs of a cron expression."""
    if not croniter.is_valid(str(cron)):
        return None
    runs = croniter(str(cron), datetime(2026, 1, 1))
    instants = [runs.get_next(datetime) for _ in range(8)]
    return max(later - earlier for earlier, later in pairwise(instants))


def _days(duration: Any) -> float:
    if isinstance(duration, BusinessDays):
        return float(duration.days)
    return duration / timedelta(days=1)


def _check_cron(model: Any, where: str, cron: Any) -> Messages:
    if cron is not None and not croniter.is_valid(str(cron)):
        yield _error(
            model,
            f"{where}: check_interval {cron!r} is not a valid cron expression.",
            'Write five cron fields, e.g. "*/5 * * * *".',
            "E023",
        )


def _check_anchor(
    model: Any, workflow: CompiledWorkflow, where: str, option: str, anchor: Any
) -> Messages:
    calculations = workflow.calculations if isinstance(workflow.calculations, dict) else {}
    if isinstance(anchor, str) and anchor in calculations:
        return
    field = _field(model, anchor) if isinstance(anchor, str) else None
    if not isinstance(field, models.DateTimeField):
        yield _error(
            model,
            f"{where}: {option} {anchor!r} is not a DateTimeField of the model nor a "
            "name in Workflow.calculations.",
            "Name a DateTimeField, or declare the expression in Workflow.calculations.",
            "E043",
        )


def _check_columns(model: Any, workflow: CompiledWorkflow) -> Messages:
    from .generation import deadline_columns

    writers: dict[str, list[str]] = {}
    for column, label in deadline_columns(workflow):
        writers.setdefault(column, []).append(label.split()[1])
    for column, names in writers.items():
        if len(names) > 1:
            yield _error(
                model,
                f"deadlines {', '.join(names)} would all write the column {column!r}.",
                "Rename a step or deadline, or give an every its own last_fired_field.",
                "E044",
            )
        field = _field(model, column)
        if field is not None and not (isinstance(field, models.DateTimeField) and field.null):
            yield _error(
                model,
                f"the column {column!r} that {names[0]} writes is declared as "
                f"{type(field).__name__}(null={field.null}); it must be a nullable DateTimeField.",
                "Remove the field so it is generated, or make it DateTimeField(null=True).",
                "E044",
            )


def _check_calculations(model: Any, workflow: CompiledWorkflow) -> Messages:
    calculations = workflow.calculations if isinstance(workflow.calculations, dict) else {}
    for name, expression in calculations.items():
        if not hasattr(expression, "resolve_expression"):
            yield _error(
                model,
                f"calculation {name!r} is {expression!r}, not a database expression.",
                "Write an expression such as F('submitted_at') + timedelta(days=2).",
                "E027",
            )
        elif _field(model, name) is not None:
            yield _error(
                model,
                f"calculation {name!r} has the name of a field of the model.",
                "Give the calculation a name of its own.",
                "E027",
            )


# Names and the graph --------------------------------------------------------


def check_references(model: Any, workflow: CompiledWorkflow) -> Messages:
    for name, step in workflow.steps.items():
        for entity, target in _targets(step):
            if target not in workflow.steps:
                yield _error(
                    model,
                    f"{_where(name, entity)} names step {target!r}, which is not declared.",
                    f"Declared steps: {', '.join(workflow.steps)}.",
                    "E012",
                )


def check_reachable(model: Any, workflow: CompiledWorkflow) -> Messages:
    start = workflow.initial_step
    if start is None:
        return
    reached, frontier = {start}, [start]
    while frontier:
        step = workflow.steps[frontier.pop()]
        for _entity, target in _targets(step):
            if target in workflow.steps and target not in reached:
                reached.add(target)
                frontier.append(target)
    for name in workflow.steps:
        if name not in reached:
            yield _error(
                model,
                f"{_where(name)} cannot be reached from the initial step {start!r}.",
                "Route a transition, on_success or on_error to it, or remove it.",
                "E013",
            )


def _targets(step: Step) -> Iterator[tuple[str, Any]]:
    for transition in step.transitions:
        for target in transition.targets:
            yield f"transition {transition.name!r}", target
    for route in step.routes:
        yield "on_success", getattr(route, "to", route)
    if step.on_error is not None:
        yield "on_error", step.on_error
    for timeout in step.timeouts:
        if timeout.transition_to is not None:
            yield f"timeout {timeout.name!r}", timeout.transition_to


def check_method_names(model: Any, workflow: CompiledWorkflow) -> Messages:
    for name in workflow.transition_names:
        attribute = getattr(model, name, None) if name.isidentifier() else None
        if not name.isidentifier() or (attribute is not None and not is_generated(attribute)):
            yield _error(
                model,
                f"transition {name!r} cannot become the method `{model.__name__}.{name}`: "
                "the model already has that attribute, or it is not an identifier.",
                "Rename the transition or the model attribute.",
                "E017",
            )
    for transition in _all_transitions(workflow):
        if not isinstance(transition.name, str):
            yield _error(model, f"transition name {transition.name!r} is not a string.", "", "E017")


def _all_transitions(workflow: CompiledWorkflow) -> Iterator[Transition]:
    for step in workflow.steps.values():
        yield from step.transitions


# Policies -------------------------------------------------------------------


def check_policies(model: Any, workflow: CompiledWorkflow) -> Messages:
    policies = workflow.policies if isinstance(workflow.policies, dict) else {}
    names = set(workflow.transition_names)
    for name, policy in policies.items():
        if name not in names:
            yield _error(
                model,
                f"Workflow.policies names {name!r}, which no step declares as a transition.",
                f"Transitions: {', '.join(sorted(names)) or 'none'}.",
                "E021",
            )
        if not callable(policy):
            yield _error(model, f"Workflow.policies[{name!r}] is not callable.", "", "E021")
    for step_name, step in workflow.steps.items():
        if step.policy is not None and not callable(step.policy):
            yield _error(
                model,
                f"{_where(step_name)}: policy {step.policy!r} is not callable.",
                "A policy is a callable (actor, record, transition_name) -> bool.",
                "E021",
            )
    by_name: dict[str, list[tuple[str, Any]]] = {}
    for step_name, step in workflow.steps.items():
        for transition in step.transitions:
            if isinstance(transition.name, str) and transition.name not in policies:
                by_name.setdefault(transition.name, []).append((step_name, step.policy))
    for name, found in by_name.items():
        if any(policy != found[0][1] for _step, policy in found):
            yield _error(
                model,
                f"transition {name!r} is shared by steps {', '.join(s for s, _ in found)} "
                "whose policies differ.",
                f"Give the steps one policy, or set Workflow.policies = {{{name!r}: ...}}.",
                "E018",
            )


def _field(model: Any, name: str) -> models.Field | None:
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


RULES = (
    check_options,
    check_state_field,
    check_steps,
    check_deadlines,
    check_references,
    check_reachable,
    check_method_names,
    check_policies,
)
