"""The ``DJANGO_WORKFLOW`` setting, read lazily with defaults."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed

DEFAULTS: dict[str, Any] = {
    # Queue automatic steps through the transport as records enter them.
    "ENQUEUE_AUTOMATIC_STEPS": True,
    # What carries queued work to workers: "django_q", "django_tasks" or "celery".
    "TRANSPORT": "django_q",
    # The django.tasks backend (an alias of TASKS) with TRANSPORT "django_tasks".
    "TASKS_BACKEND": "default",
    # The Celery app with TRANSPORT "celery", as "proj.celery:app".
    "CELERY_APP": None,
    # Extra django-q2 task options for every queued step (e.g. {"group": "workflow"}).
    "TASK_OPTIONS": {},
    # The precise scheduler: how far ahead timers are armed, and how often it looks.
    "PRECISE_HORIZON": 30,
    "PRECISE_SWEEP": 5,
    # How long a timeline leader's lease lasts without renewal (seconds).
    "PRECISE_LEASE": 15,
    # PostgreSQL: keep each poll's query, and the engine's per-record statements,
    # prepared per session (off behind PgBouncer in transaction mode, which does not
    # keep sessions).
    "PREPARE_POLLS": True,
    # Seconds a stopping worker lets running actions finish before it releases them.
    "SHUTDOWN_GRACE": 25,
    # Seconds within which an action cut short by a crash runs again on another worker.
    "RECOVERY_AFTER": 60,
    # Seconds between the worker's re-checks of a parent waiting in a join step.
    "JOIN_RECHECK": 300,
    # The shared secret outside systems sign event webhooks with (HMAC-SHA256); without
    # one, ``EventWebhookView`` refuses every request.
    "EVENT_SECRET": None,
    # The largest event webhook body accepted, in bytes.
    "EVENT_MAX_BODY": 65536,
    # Seconds ``MetricsView`` keeps the gauges it read (0: read them on every scrape).
    "METRICS_CACHE": 5,
    # Seconds it keeps the count of records in terminal steps, which grows with the table.
    "METRICS_TERMINAL_CACHE": 900,
    # A bearer token that opens ``MetricsView`` to a scraper; staff may open it anyway.
    "METRICS_TOKEN": None,
    # Seconds between the worker's looks at buffered events (a whole number of minutes):
    # each is applied once its record can take it, or expired; None: no sweep.
    "BUFFER_SWEEP": 300,
}


class WorkflowSettings:
    def __init__(self) -> None:
        self._cache: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown DJANGO_WORKFLOW setting {name!r}.")
        if self._cache is None:
            self._cache = {**DEFAULTS, **getattr(settings, "DJANGO_WORKFLOW", {})}
        return self._cache[name]

    def reload(self) -> None:
        self._cache = None


workflow_settings = WorkflowSettings()


def _reload(*, setting: str, **kwargs: Any) -> None:
    if setting == "DJANGO_WORKFLOW":
        workflow_settings.reload()


setting_changed.connect(_reload)
