"""The gauges' figures (docs/traces-and-metrics.md#metrics): per workflow model, its records
per step, overdue deadlines, halted records and due lag — the Workflows overview's
figures (``status``) — read for every model in one statement per database (an index
serves each part), and kept by ``figures`` for ``METRICS_CACHE`` seconds, the records in
terminal steps for ``METRICS_TERMINAL_CACHE``."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, router
from django.db.models import Count, DateTimeField, Min, Value
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ..conf import workflow_settings
from ..model.columns import NEXT_DUE_AT
from ..model.registry import workflow_models
from ..models import PendingEffect, WorkAttempt
from ..reading.key_lists import among
from ..work import names
from . import status


@dataclass(frozen=True)
class ModelFigures:
    """One workflow model's gauges, as the overview counts them."""

    model: str
    steps: list[status.StepStatus]
    halted: int
    due_lag_seconds: float


def moving_steps(model: Any) -> list[str]:
    """The steps records leave again in some declared version: their counts change by
    the minute."""
    moving = {
        name
        for version in model.workflow.family()
        for name, step in version.steps.items()
        if not step.is_terminal
    }
    return [name for name, _label in model.workflow.choices() if name in moving]


def read_figures(
    models: list[Any], now: datetime, settled: dict[Any, dict[str, int]]
) -> list[ModelFigures]:
    """The gauges of ``models`` at ``now``, ``settled`` holding their ``settled_records``.
    Two queries per database whatever the number of models and steps: the attempts and
    ``on_enter`` effects that ran out, then one ``UNION ALL`` of every model's counts."""
    found: dict[Any, ModelFigures] = {}
    for db, group in _by_database(models).items():
        stopped, owing = _ran_out(group, db)
        halted = [
            part
            for index, model in enumerate(group)
            if stopped[model] or owing[model]
            for part in [_halted_part(model, index, db, stopped[model], owing[model])]
        ]
        rows = _counts(group, db, now, halted)
        for index, model in enumerate(group):
            mine = [row for row in rows if row[1] == index]
            found[model] = _model_figures(model, now, settled.get(model, {}), mine)
    return [found[model] for model in models]


def settled_records(models: list[Any]) -> dict[Any, dict[str, int]]:
    """Per model, the records in terminal steps and in steps no longer declared: where
    records pile up over the years, so counting them reads most of the state index (one
    query per database)."""
    counts: dict[Any, dict[str, int]] = {model: {} for model in models}
    for db, group in _by_database(models).items():
        parts = [
            _grouped(_rows(model, db).exclude(**_in_moving_steps(model)), index)
            for index, model in enumerate(group)
        ]
        for step, index, records, *_ in _union(parts):
            counts[group[index]][step] = records
    return counts


def model_figures(model: Any, now: datetime) -> ModelFigures:
    """One model's gauges at ``now``, its terminal steps counted too."""
    return read_figures([model], now, settled_records([model]))[0]


def _gauge_parts(model: Any, index: int, db: str, now: datetime) -> list[Any]:
    """One model's grouped queries, each served by an index: the records in its moving
    steps (the state index alone), the overdue ones and their oldest due instant (the
    partial ``next_due_at`` index: only the overdue entries)."""
    parts = [_grouped(_rows(model, db).filter(**_in_moving_steps(model)), index)]
    if model.workflow.has_deadlines:
        late = _rows(model, db).filter(**{f"{NEXT_DUE_AT}__lte": now})
        parts.append(
            _grouped(late, index, records=Value(0), overdue=Count("*"), oldest=Min(NEXT_DUE_AT))
        )
    return parts


def _halted_part(
    model: Any, index: int, db: str, stopped: list[tuple[str, str]], owing: list[str]
) -> Any:
    """The model's halted records per step, read by key alone, then counted where still
    halted: filtering on the state too lets PostgreSQL AND in the state index, reading
    all the step."""
    keys = {model._meta.pk.to_python(object_id) for _work, object_id in stopped}
    keys |= {model._meta.pk.to_python(object_id) for object_id in owing}
    halted = Count("pk", filter=status.halted_condition(model, stopped, owing))
    rows = _rows(model, db).filter(among("pk", keys))
    return _grouped(rows, index, records=Value(0), halted=halted)


class Statement(NamedTuple):
    """The compiled ``UNION ALL`` of a group's ``_gauge_parts``: the same at every scrape
    but for ``now``, which sits at ``instants`` among the parameters."""

    sql: str
    params: tuple[Any, ...]
    instants: tuple[int, ...]


#: Per database and models, their ``Statement``: compiling some fifty querysets at each
#: scrape cost more than PostgreSQL took to run them.
statements: dict[tuple[str, tuple[Any, ...]], Statement] = {}


def _counts(group: list[Any], db: str, now: datetime, halted: list[Any]) -> list[tuple[Any, ...]]:
    """The rows of every model's ``_gauge_parts`` and of ``halted``, by one statement."""
    connection = connections[db]
    statement = statements.get((db, tuple(group)))
    if statement is None:
        statement = statements[db, tuple(group)] = _compiled(group, db, now)
    params = list(statement.params)
    for at in statement.instants:
        params[at] = _prepared(now, connection)
    sql = statement.sql
    if halted:
        more, more_params = _union_of(halted).query.get_compiler(db).as_sql()
        sql, params = f"{sql} UNION ALL {more}", [*params, *more_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [(*row[:5], _instant(row[5])) for row in rows]


def _compiled(group: list[Any], db: str, now: datetime) -> Statement:
    """``group``'s ``Statement``, found by compiling it at two instants: the parameters
    that differ are ``now``'s."""
    sql, params = _sql(group, db, now)
    _sql_before, before = _sql(group, db, now - timedelta(days=1))
    instants = tuple(at for at, (a, b) in enumerate(zip(params, before, strict=True)) if a != b)
    return Statement(sql, tuple(params), instants)


def _sql(group: list[Any], db: str, now: datetime) -> tuple[str, list[Any]]:
    parts = [
        part for index, model in enumerate(group) for part in _gauge_parts(model, index, db, now)
    ]
    sql, params = _union_of(parts).query.get_compiler(db).as_sql()
    return sql, list(params)


def _prepared(now: datetime, connection: Any) -> Any:
    return DateTimeField().get_db_prep_value(now, connection, prepared=False)


def _instant(value: Any) -> datetime | None:
    """A ``MIN(next_due_at)`` as the cursor gives it (SQLite: text in UTC) as an instant."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and settings.USE_TZ and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def _grouped(
    rows: Any,
    index: int,
    *,
    records: Any = None,
    overdue: Any = None,
    halted: Any = None,
    oldest: Any = None,
) -> Any:
    """``rows`` per step as a part of the union: ``(step, index, records, overdue, halted,
    oldest due instant)``. ``COUNT(*)`` by default: the key is not in the state index,
    which then suffices."""
    return (
        rows.order_by()
        .values_list(rows.model.workflow.state_attribute)
        .annotate(
            gauge_model=Value(index),
            gauge_records=Count("*") if records is None else records,
            gauge_overdue=overdue or Value(0),
            gauge_halted=halted or Value(0),
            # typed: PostgreSQL matches the branches' columns by type, and a bare NULL is text
            gauge_oldest=oldest or Cast(Value(None), DateTimeField()),
        )
    )


def _union(parts: list[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``parts``, read by one statement."""
    return list(_union_of(parts)) if parts else []


def _union_of(parts: list[Any]) -> Any:
    return parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]


def _model_figures(
    model: Any, now: datetime, settled: dict[str, int], rows: list[tuple[Any, ...]]
) -> ModelFigures:
    counts = {step: {"records": records} for step, records in settled.items()}
    late: dict[str, int] = {}
    stuck: dict[str, int] = {}
    oldest: datetime | None = None
    for step, _index, records, overdue, halted, due in rows:
        if records:
            counts[step] = {"records": records}
        late[step] = late.get(step, 0) + overdue
        stuck[step] = stuck.get(step, 0) + halted
        if due is not None and (oldest is None or due < oldest):
            oldest = due
    steps = status.listed(model, counts, late, stuck)
    return ModelFigures(
        model=model._meta.label,
        steps=steps,
        halted=sum(step.halted for step in steps),
        due_lag_seconds=(now - oldest).total_seconds() if oldest is not None else 0.0,
    )


def _rows(model: Any, db: str) -> Any:
    return model._base_manager.using(db)


def _in_moving_steps(model: Any) -> dict[str, list[str]]:
    return {f"{model.workflow.state_attribute}__in": moving_steps(model)}


def _by_database(models: list[Any]) -> dict[str, list[Any]]:
    """``models`` by the database their reads go to: a union reads one database."""
    groups: dict[str, list[Any]] = {}
    for model in models:
        groups.setdefault(router.db_for_read(model), []).append(model)
    return groups


def _ran_out(
    models: list[Any], db: str
) -> tuple[dict[Any, list[tuple[str, str]]], dict[Any, list[str]]]:
    """Per model, its halted automatic-step attempts (``(work, object_id)``) and the object
    ids of the ``on_enter`` effects whose attempts ran out, read by one statement."""
    types = ContentType.objects.db_manager(db).get_for_models(*models)
    model_of = {content_type.pk: model for model, content_type in types.items()}
    attempts = WorkAttempt.objects.using(db).filter(
        content_type__in=list(model_of), halted=True, work__startswith=names.STEP_PREFIX
    )
    effects = PendingEffect.objects.using(db).filter(
        content_type__in=list(model_of), due_at__isnull=True
    )
    stopped: dict[Any, list[tuple[str, str]]] = {model: [] for model in models}
    owing: dict[Any, list[str]] = {model: [] for model in models}
    rows = attempts.values_list("content_type_id", "work", "object_id").union(
        effects.values_list("content_type_id", Value(""), "object_id"), all=True
    )
    for content_type, work, object_id in rows:
        if work:
            stopped[model_of[content_type]].append((work, object_id))
        else:
            owing[model_of[content_type]].append(object_id)
    return stopped, owing


class Figures:
    """The gauges of every workflow model, read at most once per ``METRICS_CACHE`` seconds
    in this process, the records in terminal steps at most once per
    ``METRICS_TERMINAL_CACHE`` seconds (on the clock ``timezone.now()`` reads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken: tuple[datetime, list[ModelFigures]] | None = None
        self._settled: tuple[datetime, dict[Any, dict[str, int]]] | None = None

    def current(self) -> list[ModelFigures]:
        now = timezone.now()
        ttl, settled_ttl = _seconds("METRICS_CACHE"), _seconds("METRICS_TERMINAL_CACHE")
        with self._lock:
            if _stale(self._taken, now, ttl):
                models = workflow_models()
                if _stale(self._settled, now, settled_ttl):
                    self._settled = (now, settled_records(models))
                self._taken = (now, read_figures(models, now, self._settled[1]))
            return self._taken[1]

    def clear(self) -> None:
        with self._lock:
            self._taken = self._settled = None


def _stale(taken: tuple[datetime, Any] | None, now: datetime, seconds: float) -> bool:
    return taken is None or not 0 <= (now - taken[0]).total_seconds() < seconds


def _seconds(name: str) -> float:
    seconds = getattr(workflow_settings, name)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise ImproperlyConfigured(
            f'DJANGO_WORKFLOW["{name}"] is {seconds!r}: give a number of seconds, 0 or more '
            "(0 reads the figures on every scrape)."
        )
    return seconds


figures = Figures()
