"""A join step's re-check: the worker's look at parents waiting for their children, for
children whose step changed outside the engine (raw SQL, ``QuerySet.update()``).

It is a deadline like the others, so the poll finds waiting parents through the
``next_due_at`` index: due one ``JOIN_RECHECK`` after the entry into the step, then,
once a re-check left the parent waiting, one interval after that re-check (the engine
stores that instant as the work's wait when it re-arms it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import WorkKind
from .timeout import Deadlined


@dataclass(frozen=True, kw_only=True)
class JoinRecheck(Deadlined):
    """Evaluates the joins of a parent still in their step; ``deadline.fire_after`` is the
    ``JOIN_RECHECK`` interval."""

    kind: WorkKind = field(init=False, default=WorkKind.JOIN)

    def match(self, now: datetime | None = None) -> Q:
        # A pre-filter: a re-check that left the parent waiting pushed its due instant on.
        cutoff = (now or timezone.now()) - self.deadline.fire_after
        return self.in_step() & Q(**{f"{STATE_ENTERED_AT}__lte": cutoff})

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        return getattr(record, STATE_ENTERED_AT) + self.deadline.fire_after

    def entry_length(self) -> timedelta | int | None:
        return self.deadline.fire_after
