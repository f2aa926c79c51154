"""``Step(claim=True, release_after=...)``: a claim that has not moved the record within
that duration is released. Due ``release_after`` after ``assigned_at``, while the record
is held in the step; the stored ``next_due_at`` brings it to the worker."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone

from ..durations import shortest
from ..model.columns import ASSIGNED_AT, ASSIGNEE_ID
from ..model.triggers import WorkKind
from .record_time import later_by
from .timeout import Deadlined


@dataclass(frozen=True, kw_only=True)
class ReleaseWork(Deadlined):
    kind: WorkKind = field(init=False, default=WorkKind.RELEASE)

    def match(self, now: datetime | None = None) -> Q:
        cutoff = (now or timezone.now()) - shortest(self.deadline.fire_after)
        held = Q(**{f"{ASSIGNEE_ID}__isnull": False, f"{ASSIGNED_AT}__lte": cutoff})
        return self.in_step() & held

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        taken = getattr(record, ASSIGNED_AT, None)
        if taken is None or getattr(record, ASSIGNEE_ID, None) is None:
            return None
        return later_by(record, taken, self.deadline.fire_after)
