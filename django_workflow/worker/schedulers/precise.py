"""The precise scheduler: an in-memory timer per deadline, one leader at a time.

Every ``PRECISE_SWEEP`` seconds the leader looks ``PRECISE_HORIZON`` seconds
ahead and arms a timer for each deadline falling inside; state changes made
in this process arm at once. A timer never fires before its instant, and
firing is ``run_work``, which checks ``match`` again and claims each record
once. What a dead node held is recovered by the next leader's first sweep,
overdue deadlines first. Leadership is a lease row in the database
(``WorkflowLease``), renewed at each sweep, so it works on SQLite and
PostgreSQL alike and fails over when the leader stops renewing.
"""

from __future__ import annotations

import heapq
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import close_old_connections, router, transaction
from django.utils import timezone

from ...conf import workflow_settings
from ...engine.firing import run_work
from ...model.columns import NEXT_DUE_AT
from ...models import WorkflowLease
from ...scheduling import due_at
from ...signals import step_changed
from ...work import Work
from .catalog import PRECISE
from .scheduler import Scheduler, model_of

logger = logging.getLogger("django_workflow.schedulers.precise")  # as before 0.4

LEASE_NAME = "precise-timeline"
SWEEP_LIMIT = 10_000


class PreciseScheduler(Scheduler):
    name = PRECISE.name
    floor = PRECISE.floor
    label = "timeline"

    def accepts(self, work: Work) -> bool:
        if work.self_scheduled or work.queued:
            return False
        return work.scheduler == self.name

    def sync(self, works: list[Work]) -> dict[str, int]:
        return {"timed": sum(1 for work in works if self.accepts(work))}

    def loop(self, works: list[Work]) -> Callable[[threading.Event], None] | None:
        """The timeline, when a work is precise."""
        if not any(self.accepts(work) for work in works):
            return None
        return lambda stop: Timeline(works).run(stop)


class Lease:
    """A row naming the node that leads until ``expires_at``."""

    def __init__(self, holder: str | None = None, duration: timedelta | None = None) -> None:
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.duration = duration or timedelta(seconds=workflow_settings.PRECISE_LEASE)

    def hold(self) -> bool:
        """Take or renew the lease; ``False`` while another live node holds it."""
        now = timezone.now()
        db = router.db_for_write(WorkflowLease)
        with transaction.atomic(using=db):
            lease, created = (
                WorkflowLease.objects.using(db)
                .select_for_update()
                .get_or_create(
                    name=LEASE_NAME,
                    defaults={"holder": self.holder, "expires_at": now + self.duration},
                )
            )
            if created:
                return True
            if lease.holder != self.holder and lease.expires_at > now:
                return False
            lease.holder, lease.expires_at = self.holder, now + self.duration
            lease.save(using=db)
            return True

    def release(self) -> None:
        WorkflowLease.objects.filter(name=LEASE_NAME, holder=self.holder).delete()


class Timeline:
    """Timers for the deadlines of precise workflows, fired by the leading node."""

    def __init__(self, works: list[Work], lease: Lease | None = None) -> None:
        scheduler = PreciseScheduler()
        self.works = [work for work in works if scheduler.accepts(work)]
        self.lease = lease or Lease()
        self.horizon = timedelta(seconds=workflow_settings.PRECISE_HORIZON)
        self.sweep_every = workflow_settings.PRECISE_SWEEP
        self.timers: list[tuple[datetime, str, str]] = []
        self.armed: set[tuple[datetime, str, str]] = set()
        self.leading = False
        self._lock = threading.Lock()

    # Arming ---------------------------------------------------------------------

    def arm(self, due: datetime, work: Work) -> None:
        timer = (due, work.model_label, work.name)
        with self._lock:
            if timer not in self.armed:
                self.armed.add(timer)
                heapq.heappush(self.timers, timer)

    def sweep(self) -> int:
        """Arm every deadline due before the horizon ends; overdue ones fire at once."""
        ends = timezone.now() + self.horizon
        armed = 0
        by_model: dict[Any, list[Work]] = {}
        for work in self.works:
            by_model.setdefault(model_of(work), []).append(work)
        for model, works in by_model.items():
            state = model.workflow.state_attribute
            rows = model.workflow.queryset(router.db_for_read(model))
            soon = rows.filter(**{f"{NEXT_DUE_AT}__lte": ends}).order_by(NEXT_DUE_AT)
            for record in soon[:SWEEP_LIMIT]:
                for work in works:
                    due = due_at(work, record) if work.step == getattr(record, state) else None
                    if due is not None and due <= ends:
                        self.arm(due, work)
                        armed += 1
        return armed

    def _on_step_changed(self, sender: Any, instance: Any, to_state: str, **kwargs: Any) -> None:
        if not self.leading:
            return
        ends = timezone.now() + self.horizon
        for work in self.works:
            if work.model_label == sender._meta.label and work.step == to_state:
                due = due_at(work, instance)
                if due is not None and due <= ends:
                    self.arm(due, work)

    # Firing ---------------------------------------------------------------------

    def fire_due(self) -> int:
        """Run the works whose timers have come due; never before their instant."""
        due_works: dict[tuple[str, str], None] = {}
        now = timezone.now()
        with self._lock:
            while self.timers and self.timers[0][0] <= now:
                timer = heapq.heappop(self.timers)
                self.armed.discard(timer)
                due_works[(timer[1], timer[2])] = None
        fired = 0
        for label, name in due_works:
            work = next(w for w in self.works if (w.model_label, w.name) == (label, name))
            fired += run_work(model_of(work), name)
        return fired

    def seconds_to_next_timer(self) -> float | None:
        with self._lock:
            if not self.timers:
                return None
            return (self.timers[0][0] - timezone.now()).total_seconds()

    # Running --------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Lead when the lease allows: sweep, wait for the next timer, fire; until ``stop``."""
        step_changed.connect(self._on_step_changed)
        next_sweep = 0.0
        try:
            while not stop.is_set():
                if time.monotonic() >= next_sweep:
                    self._sweep_if_leading()
                    next_sweep = time.monotonic() + self.sweep_every
                if self.leading:
                    self._fire_safely()
                wait = next_sweep - time.monotonic()
                until_timer = self.seconds_to_next_timer()
                if until_timer is not None:
                    wait = min(wait, until_timer)
                stop.wait(max(wait, 0.0))
        finally:
            step_changed.disconnect(self._on_step_changed)
            if self.leading:
                self.lease.release()

    def _sweep_if_leading(self) -> None:
        try:
            close_old_connections()
            was_leading, self.leading = self.leading, self.lease.hold()
            if self.leading and not was_leading:
                logger.info("timeline: leading (%s)", self.lease.holder)
            if not self.leading:
                with self._lock:
                    self.timers.clear()
                    self.armed.clear()
                return
            self.sweep()
        except Exception:
            logger.exception("timeline: sweep failed; retrying at the next sweep")
            self.leading = False

    def _fire_safely(self) -> None:
        try:
            self.fire_due()
        except Exception:
            logger.exception("timeline: firing failed; the next sweep re-arms what is left")
