"""When is a record due? ``due_at`` and the pending deadlines of a record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .model.triggers import PendingKind, WorkKind
from .model.versions import workflow_of
from .work import Work
from .work.record_time import anchor_value, calendar_of, zone_of

__all__ = [
    "PendingDeadline",
    "anchor_value",
    "calendar_of",
    "count_after_firing",
    "due_at",
    "pending_deadlines",
    "zone_of",
]


@dataclass(frozen=True)
class PendingDeadline:
    name: str
    kind: PendingKind
    due_at: datetime
    #: The action to run, or the step to move to; an SLA alarm's method or transition
    #: ("" when it calls nothing).
    target: str
    label: Any = ""  # how people read it: the deadline's ``label``, else its humanised name


def due_at(work: Work, record: Any, now: datetime | None = None) -> datetime | None:
    """The instant ``record`` becomes due for ``work``, or ``None`` if it never will as it is.

    An every whose ``until`` has passed by ``now`` (default: the current time) is over.
    """
    return work.due_at(record, now)


def count_after_firing(work: Work, record: Any) -> dict[str, int]:
    """The count column to write with a firing of ``work`` (none without ``times``);
    read before the firing's instant is put on the record."""
    return work.count_after_firing(record)


def pending_deadlines(record: Any) -> list[PendingDeadline]:
    """The current step's deadlines that will fire as things stand, soonest first; of
    each SLA, only its next alarm (the warning, then the breach)."""
    workflow = workflow_of(record)
    pending, alarmed = [], set()
    for work in workflow.works:
        if not work.pending_kind or getattr(work, "sla", None) in alarmed:
            continue
        if (due := due_at(work, record)) is None:
            continue
        if work.kind == WorkKind.SLA:
            alarmed.add(work.sla)  # its warning comes before its breach in the works
        label = workflow.deadline_label(work.step, work.entity)
        target = work.target or ""
        pending.append(PendingDeadline(work.entity, work.pending_kind, due, target, label))
    return sorted(pending, key=lambda deadline: deadline.due_at)
