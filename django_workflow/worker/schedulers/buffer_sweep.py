"""The worker's sweep of buffered events (docs/events.md, "Early events: the buffer").

A buffered event is applied when its record is created or enters a step offering its
transition; what no move brings (an event delivered while its record was being created,
a key given by ``QuerySet.update()``, a buffer that ran out) the sweep settles: every
``BUFFER_SWEEP`` seconds, one django-q2 Schedule per queue of the models that buffer
events re-checks their buffered deliveries, oldest first. The polling scheduler keeps
these Schedules with its own, so a worker's start syncs them and a worker that stops
leaves them to the others.

Two sweeps at once (two workers, or a sweep beside a move) apply each event once: the
delivery row is claimed while still buffered, under its record's lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from ...conf import workflow_settings
from ...declaration import Receive
from ...engine.buffering import recheck_buffered
from ...model.registry import workflow_models

logger = logging.getLogger("django_workflow.schedulers.buffer_sweep")  # as before 0.4

SWEEP_TASK = "django_workflow.worker.schedulers.buffer_sweep.sweep_buffered"
#: What follows the queue in a sweep Schedule's name (``workflow:<queue>:buffered events``);
#: a poll's name has a cron there, which this is not.
NAME = "buffered events"


def sweep_minutes() -> int | None:
    """``DJANGO_WORKFLOW["BUFFER_SWEEP"]`` in minutes (django-q2 Schedules count them);
    ``None`` when the sweep is turned off."""
    seconds = workflow_settings.BUFFER_SWEEP
    if seconds is None:
        return None
    number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
    if not number or seconds <= 0 or seconds % 60:
        raise ImproperlyConfigured(
            f'DJANGO_WORKFLOW["BUFFER_SWEEP"] must be a whole number of minutes in seconds '
            f"(60, 300, …) or None to turn the sweep off, not {seconds!r}."
        )
    return int(seconds // 60)


def buffering_by_queue() -> dict[str, list[str]]:
    """The labels of the models whose ``Workflow.events`` buffer, by their workflow's queue."""
    found: dict[str, list[str]] = {}
    for model in workflow_models():
        events = model.workflow.events.values()
        if any(isinstance(receive, Receive) and receive.buffer is not None for receive in events):
            found.setdefault(model.workflow.queue, []).append(model._meta.label)
    return found


def sweep_schedules(named: Callable[[str], str]) -> dict[str, dict[str, Any]]:
    """The sweep Schedules wanted, by name (``named(queue)``, the polling scheduler's
    naming): their fields as it syncs them (none when the sweep is off or no model buffers
    events)."""
    from django_q.models import Schedule

    minutes = sweep_minutes()
    if minutes is None:
        return {}
    return {
        named(queue): {
            "func": SWEEP_TASK,
            "args": repr((labels,)),
            "kwargs": repr({"q_options": {"cluster": queue}}),
            "schedule_type": Schedule.MINUTES,
            "minutes": minutes,
            "cron": None,
            "repeats": -1,
        }
        for queue, labels in buffering_by_queue().items()
    }


def kick_off_sweeps(named: Callable[[str], str], queues: list[str]) -> None:
    """Queue each sweep of ``queues`` once, now the clusters run: what ran out or became
    possible while no worker ran is settled at the start, not a sweep interval later."""
    from django_q.tasks import async_task

    if sweep_minutes() is None:
        return
    for queue, labels in buffering_by_queue().items():
        if queue in queues:
            options = {"cluster": queue, "group": named(queue)}
            async_task(SWEEP_TASK, labels, q_options=options)


def sweep_buffered(model_labels: list[str]) -> dict[str, int]:
    """The Schedule's task: the buffered events of these models looked at again; counts
    what became of them (``"buffered"``: still waiting)."""
    counts = recheck_buffered([apps.get_model(label) for label in model_labels])
    settled = {outcome: n for outcome, n in counts.items() if outcome != "buffered"}
    if settled:
        said = ", ".join(f"{n} {outcome}" for outcome, n in sorted(settled.items()))
        logger.info("buffered events of %s: %s", ", ".join(model_labels), said)
    return dict(counts)
