"""Schedulers: when units of work run. Each receives ``Work`` objects and nothing else."""

from .base import Scheduler, all_works, model_of
from .polling import PollingScheduler
from .precise import PreciseScheduler

#: Every scheduler, by the name a workflow's ``scheduler`` option gives.
SCHEDULERS: dict[str, type[Scheduler]] = {
    scheduler.name: scheduler for scheduler in (PollingScheduler, PreciseScheduler)
}

__all__ = [
    "SCHEDULERS",
    "PollingScheduler",
    "PreciseScheduler",
    "Scheduler",
    "all_works",
    "model_of",
]
