"""Picking the records a unit of work is due for: what every kind's engine shares.

A ``Picking`` is one run of work for one model at one instant. The kinds
that find their own records (automatic steps, and a deadline the project
schedules itself) walk their ``match`` a batch at a time; the others are
handed the records the walk over stored due instants found (``firing``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from django.db import router

from ..process import stopping
from ..reading import attempts_read
from ..scheduling import due_at
from ..signals import work_fired
from ..work import Work
from .sql import probes

#: Named as in release 2, where projects configure it (docs/worker.md).
logger = logging.getLogger("django_workflow.firing")

BATCH_SIZE = 500
#: How many records a "fired for" log line names; it counts the rest.
NAMED_IN_LOG = 10


class Picking:
    """One run of work for ``model`` at ``now``, ``batch_size`` records at a time."""

    def __init__(self, model: Any, now: datetime, batch_size: int = BATCH_SIZE) -> None:
        self.model, self.now, self.batch_size = model, now, batch_size
        self.db = router.db_for_write(model)

    def picked(self, work: Work, run: Callable[[Picking, Work], list[Any]]) -> int:
        """``run`` over the records ``work`` matches, after one lookup says there are some."""
        if not probes.due(self.model, [work], self.now, self.db):  # an idle poll
            return 0
        fired = run(self, work)
        report(self.model, work, fired)
        return len(fired)

    def batches(self, work: Work, skip: set[Any]) -> Iterator[list[Any]]:
        """Keys of matching records not in ``skip``, a batch at a time, until none are
        left or the worker stops."""
        while not stopping.requested():
            pks = list(self.matching(work, skip).values_list("pk", flat=True)[: self.batch_size])
            yield pks
            if len(pks) < self.batch_size:
                return

    def matching(self, work: Work, skip: set[Any]) -> Any:
        rows = probes.matching(self.model, work, self.now, self.db)
        return rows.exclude(pk__in=skip) if skip else rows

    def is_due(self, work: Work, record: Any) -> bool:
        due = due_at(work, record, self.now)
        return due is not None and due <= self.now

    def attempts(self, work: Work, pks: list[Any]) -> dict[Any, Any]:
        """The attempt rows of this round for a batch (rare: only after failures)."""
        model, db = self.model, self.db
        found = attempts_read.rows(model, db).filter(
            work=work.name, object_id__in=[str(pk) for pk in pks]
        )
        if not found.exists():
            return {}
        records = model.workflow.queryset(db).in_bulk(pks)
        rounds = {pk: due_at(work, record, self.now) for pk, record in records.items()}
        return attempts_read.current(model, work, {pk: at for pk, at in rounds.items() if at}, db)


def report(model: Any, work: Work, fired: list[Any]) -> None:
    """The one INFO line of a run that fired: which records, by key."""
    if fired:
        logger.info("%s: %s fired for %s", model._meta.label, work.name, named(fired))
        work_fired.send(sender=model, work=work.name, count=len(fired))


def named(pks: list[Any], limit: int = NAMED_IN_LOG) -> str:
    """``#3, #7``; past ``limit`` keys, ``#1, …, #10 and 490 more``."""
    shown = ", ".join(f"#{pk}" for pk in pks[:limit])
    return shown if len(pks) <= limit else f"{shown} and {len(pks) - limit} more"
