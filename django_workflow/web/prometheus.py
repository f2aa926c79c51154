"""``MetricsView``: the Prometheus exposition of where records stand and what the engine did
(docs/traces-and-metrics.md#metrics). Needs ``prometheus_client``
(``pip install dj-workflow[metrics]``).

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
from collections.abc import Iterator
from functools import cache
from typing import Any

from django.http import HttpRequest, HttpResponse
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

from ..conf import workflow_settings
from ..process import meters
from ..report.gauges import ModelFigures, figures

#: Set (by ``prometheus_client``'s rule) when every process of the host shares its counts.
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


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
