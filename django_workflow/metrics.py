"""``MetricsView``: the Prometheus exposition of where records stand and what the engine did
(docs/metrics.md). Needs ``prometheus_client`` (``pip install dj-workflow[metrics]``).

The gauges are the Workflows overview's figures (``status``), read from indexes and
kept for ``DJANGO_WORKFLOW["METRICS_CACHE"]`` seconds, so scrapes from several
Prometheus servers or web processes cost the database one reading. The counters and
the histogram are ``meters``'s: this process's, or every process of the host when
``PROMETHEUS_MULTIPROC_DIR`` is set.

Not public: a request needs ``Authorization: Bearer <METRICS_TOKEN>`` or a logged-in
active staff user; anything else gets 403.
"""

from __future__ import annotations

import hmac
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Min
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views import View

try:
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import GaugeMetricFamily
    from prometheus_client.exposition import choose_encoder
    from prometheus_client.multiprocess import MultiProcessCollector
except ImportError as missing:  # pragma: no cover - the extra is part of the test set-up
    raise ImportError(
        "django_workflow.metrics needs prometheus_client: pip install 'dj-workflow[metrics]'."
    ) from missing

from . import meters, status
from .columns import NEXT_DUE_AT
from .conf import workflow_settings
from .registry import workflow_models

#: Set (by ``prometheus_client``'s rule) when every process of the host shares its counts.
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


@dataclass(frozen=True)
class ModelFigures:
    """One workflow model's gauges, as the overview counts them."""

    model: str
    steps: list[status.StepStatus]
    halted: int
    due_lag_seconds: float


def moving_steps(model: Any) -> list[str]:
    """The declared steps records leave again: their counts change by the minute."""
    return [name for name, step in model.workflow.steps.items() if not step.is_terminal]


def settled_records(model: Any) -> dict[str, int]:
    """The records in terminal steps and in steps no longer declared: where records pile
    up over the years, so counting them reads most of the state index."""
    return status.records_in(model, moving_steps(model), others=True)


def model_figures(model: Any, now: datetime, settled: dict[str, int] | None = None) -> ModelFigures:
    """The model's gauges at ``now``; ``settled``: its ``settled_records``, if already read."""
    if settled is None:
        settled = settled_records(model)
    records = {**settled, **status.records_in(model, moving_steps(model))}
    steps = status.step_statuses(model, now, records=records)
    return ModelFigures(
        model=model._meta.label,
        steps=steps,
        halted=sum(step.halted for step in steps),
        due_lag_seconds=due_lag(model, now),
    )


def due_lag(model: Any, now: datetime) -> float:
    """``now`` minus the oldest due instant not yet fired, in seconds; 0 when nothing is
    overdue (read from the ``next_due_at`` index: its first entry)."""
    if not model.workflow.has_deadlines:
        return 0.0
    oldest = status.overdue(model, now).aggregate(oldest=Min(NEXT_DUE_AT))["oldest"]
    return (now - oldest).total_seconds() if oldest is not None else 0.0


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
                    self._settled = (now, {model: settled_records(model) for model in models})
                settled = self._settled[1]
                self._taken = (
                    now,
                    [model_figures(model, now, settled.get(model)) for model in models],
                )
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


class WorkflowGauges:
    """A ``prometheus_client`` collector: the gauges, from ``figures``."""

    def describe(self) -> Iterator[Any]:
        yield from self._families()

    def collect(self) -> Iterator[Any]:
        yield from self._families(figures.current())

    def _families(self, found: list[ModelFigures] = ()) -> Iterator[Any]:
        records = GaugeMetricFamily(
            "workflow_records", "Records in each step.", labels=["model", "step"]
        )
        overdue = GaugeMetricFamily(
            "workflow_overdue",
            "Records whose deadline came due and has not fired (waiting retries aside).",
            labels=["model", "step"],
        )
        halted = GaugeMetricFamily(
            "workflow_halted", "Records whose attempts ran out.", labels=["model"]
        )
        lag = GaugeMetricFamily(
            "workflow_due_lag_seconds",
            "Now minus the oldest due instant not yet fired (0 when nothing is overdue).",
            labels=["model"],
        )
        for model in found:
            for step in model.steps:
                records.add_metric([model.model, step.step], step.records)
                overdue.add_metric([model.model, step.step], step.overdue)
            halted.add_metric([model.model], model.halted)
            lag.add_metric([model.model], model.due_lag_seconds)
        yield from (records, overdue, halted, lag)


@cache
def registry() -> Any:
    """What a scrape of this process shows: the gauges, and the counts of this process or,
    with ``PROMETHEUS_MULTIPROC_DIR`` set, of every process writing to that folder."""
    scraped = CollectorRegistry(auto_describe=False)
    scraped.register(WorkflowGauges())
    if os.environ.get(MULTIPROCESS_VARIABLE):
        MultiProcessCollector(scraped)
    else:
        for meter in meters.METERS:
            scraped.register(meter)
    return scraped


def allowed(request: HttpRequest) -> bool:
    """A bearer token equal to ``METRICS_TOKEN`` (when one is set), or active staff."""
    token = workflow_settings.METRICS_TOKEN
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    if token and given and hmac.compare_digest(given.encode(), str(token).encode()):
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_staff)


class MetricsView(View):
    """``GET``: the metrics in Prometheus's text format (OpenMetrics when asked for)."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not allowed(request):
            return HttpResponse(
                "Metrics need a staff login or the METRICS_TOKEN as a bearer token.\n",
                status=403,
                content_type="text/plain; charset=utf-8",
            )
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        return HttpResponse(encoder(registry()), content_type=content_type)
