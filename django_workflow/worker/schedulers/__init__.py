"""Schedulers: when units of work run. Each receives ``Work`` objects and nothing else.

``SCHEDULERS`` describes every scheduler without importing it (registry.py);
the implementations load when first asked for, by the worker.
"""

from typing import Any

from .catalog import (
    SCHEDULERS,
    SchedulerInfo,
    kick_off,
    loaded,
    loops,
)
from .scheduler import Scheduler, all_works, model_of

__all__ = [
    "SCHEDULERS",
    "PollingScheduler",
    "PreciseScheduler",
    "Scheduler",
    "SchedulerInfo",
    "all_works",
    "kick_off",
    "loaded",
    "loops",
    "model_of",
]

_IMPLEMENTATIONS = {"PollingScheduler": "polling", "PreciseScheduler": "precise"}


def __getattr__(name: str) -> Any:
    # The implementations import the runtime: loaded on first use, never by the checks.
    if name in _IMPLEMENTATIONS:
        return SCHEDULERS[_IMPLEMENTATIONS[name]].load()
    raise AttributeError(f"module 'django_workflow.worker.schedulers' has no attribute {name!r}")
