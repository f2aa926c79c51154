"""The interface every scheduling strategy implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import timedelta
from typing import Any, ClassVar

from django.apps import apps

from ..registry import workflow_models
from ..work import Work


class Scheduler(ABC):
    """Decides when each ``Work`` runs; ``run_work`` does the running.

    A scheduler is chosen by a workflow's ``scheduler`` option (its ``name``);
    ``floor`` is the shortest deadline it honours, which the checks enforce.
    """

    name: ClassVar[str]
    floor: ClassVar[timedelta]

    @abstractmethod
    def accepts(self, work: Work) -> bool:
        """Whether this scheduler is responsible for ``work``."""

    @abstractmethod
    def sync(self, works: list[Work]) -> dict[str, int]:
        """Make durable arrangements for ``works`` (and drop stale ones); return counts."""


def all_works() -> list[Work]:
    """Every unit of work of every workflow model, in model then declaration order."""
    return [work for model in workflow_models() for work in model.workflow.works]


def model_of(work: Work) -> Any:
    return apps.get_model(work.model_label)
