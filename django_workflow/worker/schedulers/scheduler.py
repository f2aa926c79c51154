"""The interface every scheduling strategy implements."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import timedelta
from typing import Any, ClassVar

from django.apps import apps

from ...model.registry import workflow_models
from ...work import Work


class Scheduler(ABC):
    """Decides when each ``Work`` runs; ``run_work`` does the running.

    A scheduler is chosen by a workflow's ``scheduler`` option (its ``name``);
    ``floor`` is the shortest deadline it honours, which the checks enforce. The
    worker drives every scheduler of the registry: it ``sync``s each at its start,
    ``kick_off``s each once its django-q2 clusters run, and runs each one's ``loop``
    beside them.
    """

    name: ClassVar[str]
    floor: ClassVar[timedelta]
    #: How the worker's start marks the works it accepts ("polled", "timeline").
    label: ClassVar[str]
    #: What ``sync`` arranges, as the worker's start names it; ``""``: nothing to say.
    arranges: ClassVar[str] = ""

    @abstractmethod
    def accepts(self, work: Work) -> bool:
        """Whether this scheduler is responsible for ``work``."""

    @abstractmethod
    def sync(self, works: list[Work]) -> dict[str, int]:
        """Make durable arrangements for ``works`` (and drop stale ones); return counts."""

    def kick_off(self, works: list[Work], queues: list[str]) -> None:
        """Queue, for the clusters of ``queues`` (up and running), what should run now
        rather than at the first tick ``sync`` arranged; never raises. Nothing by default."""
        return None

    def loop(self, works: list[Work]) -> Callable[[threading.Event], None] | None:
        """What the worker runs in a thread of its own until the event is set, for
        ``works``; ``None`` when django-q2's cluster does all the running."""
        return None


def all_works() -> list[Work]:
    """Every unit of work of every workflow model, in model then declaration order."""
    return [work for model in workflow_models() for work in model.workflow.all_works]


def model_of(work: Work) -> Any:
    return apps.get_model(work.model_label)
