"""Schedulers: when units of work run. Each receives ``Work`` objects and nothing else."""

from .base import Scheduler, all_works, model_of

__all__ = ["Scheduler", "all_works", "model_of"]
