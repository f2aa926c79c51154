"""Bringing back automatic steps whose worker stopped or died mid-action.

A running attempt stays alive while its worker's heartbeat renews its lease
(``engine.leases``). The heartbeat of each ``workflow_worker`` also looks at the
attempts its own processes run (a process that died is released at once) and at
everyone's expired attempts, and queues their steps again. The queued run takes the
attempt over as an interruption: a stop or a crash spends no attempt.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from django.db import close_old_connections
from django.utils import timezone

from ..conf import workflow_settings
from ..engine.leases import claim_expired, expire, renew
from .transport import enqueue_step

#: Named as in release 2, where projects configure it (docs/worker.md).
logger = logging.getLogger("django_workflow.recovery")


def hand_over(node: str, now: datetime | None = None) -> int:
    """This node stops: its unfinished attempts expire and are queued again at once."""
    now = now or timezone.now()
    expire(node, now)
    return recover(now + timedelta(microseconds=1))


def recover(now: datetime | None = None) -> int:
    """Queue again every automatic step whose running attempt expired; return how many."""
    queued = 0
    for model, pk, work in claim_expired(now or timezone.now()):
        enqueue_step(model._meta.label, pk, work.step, work.queue)
        queued += 1
    if queued:
        logger.warning("recovered %d interrupted attempt(s)", queued)
    return queued


class Heartbeat:
    """Renews this node's attempts and recovers expired ones, every ``RECOVERY_AFTER / 6`` s."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.every = workflow_settings.RECOVERY_AFTER / 6
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="workflow-heartbeat", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join()

    def beat(self) -> None:
        try:
            close_old_connections()
            renew(self.node)
            recover()
        except Exception:  # the database may be busy or away: the next beat tries again
            logger.exception("heartbeat failed; trying again in %s s", self.every)

    def _run(self) -> None:
        while not self.done.is_set():
            self.beat()
            self.done.wait(self.every)
