"""What every kind of work shares, and what a kind asks of the engine to run.

A ``Work`` is all a scheduler is given. ``match(now)`` selects the records
eligible at ``now`` with bind parameters computed in Python (so time travel
in tests moves it too); ``due_at`` turns the ``deadline`` rule into an instant
per record. The two agree: for calendar durations ``match`` is exact; for
business days and wall-clock (``cron``) schedules it is a pre-filter on a
lower bound that the index still serves, and ``due_at`` decides the instant.

Each kind (``step``, ``timeout``, ``every``, ``join``, …) is a class of its own owning
``match`` and ``due_at``: when it is due. How it fires is the engine's, one module
per kind registered by the kind's class (``engine/kind_engines``), so this package
never imports the engine and a new kind grows no shared interface.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.db.models import Q
from django.utils import timezone

from ..declaration import Retry
from ..durations import BusinessDays, BusinessHours, is_calendar
from ..model.columns import WORKFLOW_VERSION
from ..model.triggers import PendingKind, WorkKind

Duration = timedelta | BusinessDays | BusinessHours


@dataclass(frozen=True)
class Deadline:
    """``field`` plus ``fire_after``; with ``fire_after=None`` the field holds the instant
    (a timeout's ``fire_at``) or, for an every, its ``cron`` says when."""

    field: str
    fire_after: Duration | None = None


@dataclass(frozen=True, kw_only=True)
class Work:
    name: str
    #: The model it runs on, as ``app_label.ModelName``: all a scheduler needs to find it.
    model_label: str
    #: Set by the kind's class.
    kind: WorkKind = field(init=False, default=None)
    step: str
    #: The declared name: the step's, the timeout's or the every's.
    entity: str
    state_attribute: str
    deadline: Deadline | None
    retry: Retry
    check_interval: str
    queue: str
    #: The workflow's ``scheduler`` option: which scheduler runs this work.
    scheduler: str
    action: str | None = None
    #: The workflow version whose records it runs for; ``None`` on a model without versions.
    version: int | None = None

    #: Queued by the transport when a record enters the step; every poll is its safety net.
    queued: ClassVar[bool] = False
    #: How ``pending_deadlines`` names it ("action", "transition", "every"); empty when
    #: it is no deadline.
    pending_kind: ClassVar[PendingKind | None] = None

    # Readable on every Work; the kinds they mean something for declare them as fields
    # (unannotated here, so a kind's own fields keep the order the fingerprint reads).
    transition_to = None
    until = None
    fired_field = None
    last_fired_field = None
    fired_together = ()
    self_scheduled = False
    time_limit = None
    cron = None
    times = None
    count_field = None

    @property
    def exact(self) -> bool:
        """Whether ``match`` alone decides eligibility (no business-day or business-hour
        arithmetic, no wall-clock schedule: all depend on the record's zone)."""
        fire_after = self.deadline.fire_after if self.deadline else None
        return fire_after is None or is_calendar(fire_after)

    @property
    def anchor(self) -> str:
        """The column a poll orders by, so PostgreSQL walks the index."""
        return self.deadline.field if self.deadline else "pk"

    @property
    def target(self) -> str | None:
        """What it leads to: the action it runs, or the step a transition timeout moves to."""
        return self.action

    def in_step(self) -> Q:
        if self.version is None:
            return Q(**{self.state_attribute: self.step})
        return Q(**{self.state_attribute: self.step, WORKFLOW_VERSION: self.version})

    def runs_for(self, record: Any) -> bool:
        """Whether ``record`` is in this work's step, on its version."""
        if getattr(record, self.state_attribute) != self.step:
            return False
        return self.version is None or getattr(record, WORKFLOW_VERSION) == self.version

    def match(self, now: datetime | None = None) -> Q:
        """Records eligible at ``now`` (a pre-filter for business days; see ``exact``)."""
        return self.in_step()

    def due_at(self, record: Any, now: datetime | None = None) -> datetime | None:
        """The instant ``record`` becomes due, or ``None`` if it never will as it is."""
        if not self.runs_for(record):
            return None
        return self.due_in_step(record, now or timezone.now())

    def due_in_step(self, record: Any, now: datetime) -> datetime | None:
        raise NotImplementedError

    def entry_length(self) -> timedelta | int | None:
        """How long after the entry it falls due when that is the same for every record
        (business days as their count); ``None`` when it depends on more."""
        return None

    def count_after_firing(self, record: Any) -> dict[str, int]:
        """The count column to write with a firing (none but an every's with ``times``)."""
        return {}

    def on_error(self, workflow: Any) -> str | None:
        """The step a failure leads to once the attempts run out; ``None``: it halts."""
        return None
