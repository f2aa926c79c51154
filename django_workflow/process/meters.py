"""The counters and the histogram the engine feeds: events, attempts and how late deadlines
fired (docs/traces-and-metrics.md#metrics). ``metrics`` exposes them with the gauges.

A low room: the engine calls it, it imports nothing of the package. Each count is
added once the transaction that wrote it commits, so a rolled-back move counts
nothing; a count that fails (a missing multiprocess folder) is logged by Django and
never reaches the caller of the move. Without ``prometheus_client`` installed every
call does nothing.

With ``PROMETHEUS_MULTIPROC_DIR`` set in the environment before the process starts,
``prometheus_client`` keeps these values in files of that folder, one per process,
and a scrape adds up every process of the host (the worker's included).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

try:
    from prometheus_client import Counter, Histogram
except ImportError:  # the ``metrics`` extra is not installed: nothing is counted
    Counter = Histogram = None


class Outcome:
    """How an attempt of a unit of work ended (the ``outcome`` label)."""

    SUCCEEDED = "succeeded"
    #: Failed, another attempt follows after the backoff.
    FAILED = "failed"
    #: Failed with no attempt left: the record stays, halted.
    HALTED = "halted"
    #: Failed with no attempt left: the record took ``on_error``.
    ERROR_PATH = "error_path"


#: From half a second (the precise scheduler) past an hour (a stopped worker): a polled
#: deadline lands under its ``check_interval`` (a minute by default).
LATENESS_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)

if Counter is not None:
    TRANSITIONS: Any = Counter(
        "workflow_transitions",
        "Events the engine wrote (a log row each, whether or not the workflow keeps its log).",
        ["model", "transition", "trigger"],
        registry=None,
    )
    ATTEMPTS: Any = Counter(
        "workflow_work_attempts",
        "Attempts of units of work that run an action, by how they ended.",
        ["model", "work", "outcome"],
        registry=None,
    )
    LATENESS: Any = Histogram(
        "workflow_firing_lateness_seconds",
        "How long after its due instant a deadline fired.",
        ["model"],
        buckets=LATENESS_BUCKETS,
        registry=None,
    )
    METERS: tuple[Any, ...] = (TRANSITIONS, ATTEMPTS, LATENESS)
else:
    METERS = ()


def moved(model: Any, event: Any, db: str, records: int = 1) -> None:
    """``records`` records had ``event`` (a move, or an event in place)."""
    if METERS:
        labels = (model._meta.label, event.name, str(event.trigger))
        _after_commit(lambda: TRANSITIONS.labels(*labels).inc(records), db)


def attempted(model: Any, work: str, outcome: str, db: str) -> None:
    """One attempt of ``work`` ended with ``outcome`` (an ``Outcome``)."""
    if METERS:
        labels = (model._meta.label, work, outcome)
        _after_commit(lambda: ATTEMPTS.labels(*labels).inc(), db)


def fired(model: Any, due: Iterable[datetime | None], db: str) -> None:
    """Deadlines due at ``due`` fired: each one's lateness is counted at commit."""
    if METERS:
        instants = [at for at in due if at is not None]
        label = model._meta.label
        _after_commit(lambda: _late(label, instants), db)


def _after_commit(count: Callable[[], None], db: str) -> None:
    # robust: a count that fails is logged, never raised to the caller of the move
    transaction.on_commit(count, using=db, robust=True)


def _late(model: str, due: list[datetime]) -> None:
    now = timezone.now()
    histogram = LATENESS.labels(model)
    for at in due:
        histogram.observe(max(0.0, (now - at).total_seconds()))
