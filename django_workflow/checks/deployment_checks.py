"""django-q2 and database settings that make workflows lose or repeat work (W002 to W005)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core import checks
from django.db import connections

from ..durations import InvalidDuration, parse_timedelta

#: django-q2's default ``retry``, in seconds.
DEFAULT_RETRY = 60


def check_deployment(
    models: list[Any], databases: Mapping[str, Mapping[str, Any]] | None = None
) -> list[checks.CheckMessage]:
    """Warnings about ``Q_CLUSTER`` and ``databases`` (alias to settings; default: the
    configured connections)."""
    if databases is None:
        databases = {alias: connections[alias].settings_dict for alias in connections}
    cluster = getattr(settings, "Q_CLUSTER", {}) or {}
    messages = [*_check_cluster(cluster, _longest_time_limit(models))]
    for alias, database in databases.items():
        messages.extend(_check_database(alias, database))
    return messages


def _warning(message: str, hint: str, code: str) -> checks.Warning:
    return checks.Warning(message, hint=hint, id=f"django_workflow.{code}")


def _check_cluster(cluster: Mapping[str, Any], longest: float) -> list[checks.Warning]:
    messages = []
    if not cluster.get("max_attempts"):
        messages.append(
            _warning(
                "Q_CLUSTER has no max_attempts: django-q2 retries a failing task forever.",
                "Set Q_CLUSTER['max_attempts'], e.g. 3; workflows retry per Retry themselves.",
                "W002",
            )
        )
    timeout, retry = cluster.get("timeout"), cluster.get("retry", DEFAULT_RETRY)
    if retry <= max(timeout or 0, longest):
        messages.append(
            _warning(
                f"Q_CLUSTER retry ({retry} s) is not longer than the task timeout ({timeout} s) "
                f"and the longest time_limit ({longest:.0f} s): a running task would be "
                "redelivered.",
                "Set Q_CLUSTER['retry'] above both.",
                "W003",
            )
        )
    return messages


def _longest_time_limit(models: list[Any]) -> float:
    """The longest readable ``time_limit`` of any step, in seconds (0 without one)."""
    return max(
        (
            _seconds(step.time_limit)
            for model in models
            if model.workflow is not None
            for step in model.workflow.steps.values()
            if step.time_limit is not None
        ),
        default=0,
    )


def _seconds(duration: Any) -> float:
    try:
        return parse_timedelta(duration).total_seconds()
    except InvalidDuration:  # reported as E026 with its step
        return 0


def _check_database(alias: str, database: Mapping[str, Any]) -> list[checks.Warning]:
    engine = database["ENGINE"]
    options = database.get("OPTIONS", {})
    if engine.endswith("sqlite3") and options.get("transaction_mode") != "IMMEDIATE":
        return [
            _warning(
                f"SQLite database {alias!r} uses deferred transactions: the web process and "
                "the worker will fail with 'database is locked'.",
                "Set OPTIONS = {'transaction_mode': 'IMMEDIATE', 'timeout': 20}.",
                "W004",
            )
        ]
    # None keeps connections open for good, which is what the hint recommends too.
    if engine.endswith("postgresql") and database.get("CONN_MAX_AGE", 0) == 0:
        return [
            _warning(
                f"PostgreSQL database {alias!r} has CONN_MAX_AGE = 0: django-q2's ORM broker "
                "opens new connections for every task.",
                "Set CONN_MAX_AGE to 60 or more (or None).",
                "W005",
            )
        ]
    return []
