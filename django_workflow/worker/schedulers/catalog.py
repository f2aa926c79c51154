"""The scheduler registry: each scheduler's name and floor, and where it lives.

The checks read a scheduler's name and floor here; the worker ``load``s the
implementation, which only then imports the runtime (firing, the engine) and
django-q2's machinery. So ``manage.py check`` imports none of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from .scheduler import Scheduler


@dataclass(frozen=True)
class SchedulerInfo:
    """What is known of a scheduler without importing it."""

    #: The value of a workflow's ``scheduler`` option that chooses it.
    name: str
    #: The shortest deadline it honours (the checks enforce it).
    floor: timedelta
    #: The dotted path of its ``Scheduler`` class.
    implementation: str

    def load(self) -> type[Scheduler]:
        return import_string(self.implementation)


POLLING = SchedulerInfo(
    "polling", timedelta(seconds=60), "django_workflow.worker.schedulers.polling.PollingScheduler"
)
PRECISE = SchedulerInfo(
    "precise", timedelta(seconds=1), "django_workflow.worker.schedulers.precise.PreciseScheduler"
)

#: Every scheduler, by the name a workflow's ``scheduler`` option gives.
SCHEDULERS: dict[str, SchedulerInfo] = {info.name: info for info in (POLLING, PRECISE)}


def loaded() -> list[Scheduler]:
    """One instance of every registered scheduler, in the registry's order."""
    return [info.load()() for info in SCHEDULERS.values()]


def loops(works: list[Any]) -> dict[str, Callable[[threading.Event], None]]:
    """What the worker runs beside its clusters, by thread name (the scheduler's
    ``label``): the ``loop`` of every registered scheduler that has one for ``works``."""
    found = {}
    for scheduler in loaded():
        loop = scheduler.loop(works)
        if loop is not None:
            found[scheduler.label] = loop
    return found


def kick_off(works: list[Any], queues: list[str]) -> None:
    """What the worker does once the clusters of ``queues`` run: every registered
    scheduler's ``kick_off`` (the polling one queues each group's first poll)."""
    for scheduler in loaded():
        scheduler.kick_off(works, queues)
