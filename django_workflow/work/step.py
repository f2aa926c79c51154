"""An automatic step's work, and a step's ``on_enter``: both queued at the entry, with
every poll as their safety net."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import WorkKind
from .base import Work


@dataclass(frozen=True, kw_only=True)
class StepWork(Work):
    """An automatic step: its action runs once per stay, from the entry on."""

    kind: WorkKind = field(init=False, default=WorkKind.STEP)
    #: The step's ``time_limit``.
    time_limit: timedelta | None = None

    queued = True

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        return getattr(record, STATE_ENTERED_AT)

    def on_error(self, workflow: Any) -> str | None:
        return workflow.steps[self.step].on_error


@dataclass(frozen=True, kw_only=True)
class EntryWork(Work):
    """``Step(on_enter=...)``: an effect owed to each entry, run from its ``PendingEffect``
    row (see ``engine.effects``); no deadline, no fired column."""

    kind: WorkKind = field(init=False, default=WorkKind.EFFECT)
    #: The step's ``time_limit``: its ``on_enter`` is stopped there too.
    time_limit: timedelta | None = None

    queued = True

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        return getattr(record, STATE_ENTERED_AT)
