"""A service-level clock's warning and breach (``Workflow.slas``): due when the clock,
running in this step, reaches its share of the target, or at once in any non-terminal
step if an ended stay reached it before it fired; fired once per record, marked in its
own column. An alarm calling a model method fires like an action timeout; one
calling a transition, or nothing, is fired by the engine's SLA room."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils.translation import gettext as _

from ..declaration import humanise
from ..model.triggers import PendingKind, WorkKind
from .sla_clocks_read import owed_at
from .timeout import Deadlined

WARN = "warn"
BREACH = "breach"
#: The alarms of an SLA, in the order they fall due.
ALARMS = (WARN, BREACH)


def alarm_label(sla: str, alarm: str) -> str:
    """How an alarm still to come reads: "SLA “Resolution”: warning" or "…: breach"."""
    if alarm == WARN:
        return _("SLA “%(sla)s”: warning") % {"sla": humanise(sla)}
    return _("SLA “%(sla)s”: breach") % {"sla": humanise(sla)}


def fired_label(sla: str, alarm: str) -> str:
    """How a fired alarm's log row reads: "SLA “Resolution” warned" or "… breached"."""
    if alarm == WARN:
        return _("SLA “%(sla)s” warned") % {"sla": humanise(sla)}
    return _("SLA “%(sla)s” breached") % {"sla": humanise(sla)}


@dataclass(frozen=True, kw_only=True)
class SlaAlarm(Deadlined):
    kind: WorkKind = field(init=False, default=WorkKind.SLA)
    pending_kind = PendingKind.SLA
    #: The SLA's name in ``Workflow.slas``.
    sla: str
    #: ``warn`` or ``breach``.
    alarm: str
    #: The clock time consumed at which it falls due.
    at: timedelta
    #: The column marking that it fired (never cleared: once per record).
    mark: str
    #: A transition to call instead of a method (``action`` then stays ``None``).
    transition: str | None = None

    @property
    def exact(self) -> bool:
        return False  # what a record consumed before its stay decides

    @property
    def fired_together(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.mark,)

    @property
    def target(self) -> str | None:
        return self.action or self.transition

    def match(self, now: datetime | None = None) -> Q:
        return self.in_step() & Q(**{f"{self.mark}__isnull": True})

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        if getattr(record, self.mark) is not None:
            return None
        return owed_at(record, self.sla, self.at)
