"""Bringing back automatic steps whose worker stopped or died mid-action.

A running attempt stays alive while its worker's heartbeat renews it. The
heartbeat of each ``workflow_worker`` also looks at the attempts its own
processes run (a process that died is released at once) and at everyone's
expired attempts, and queues their steps again. The queued run takes the
attempt over as an interruption: a stop or a crash spends no attempt.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timedelta
from typing import Any

from django.db import close_old_connections
from django.utils import timezone

from ..conf import workflow_settings
from ..models import WorkAttempt
from ..queueing import enqueue_step
from ..retrying import RECOVERING, lease, running
from ..work import StepWork

#: Named as in release 2, where projects configure it (docs/worker.md).
logger = logging.getLogger("django_workflow.recovery")


def renew(node: str, now: datetime | None = None) -> int:
    """Keep this node's running attempts alive; expire those whose process is gone.

    An attempt past its step's time limit is not renewed: its process hangs
    where the limit could not interrupt it, and the attempt counts as spent.
    """
    now = now or timezone.now()
    mine = running(WorkAttempt.objects.filter(holder=node))
    over = [row.pk for row in mine.select_related("content_type") if _over(row, now)]
    if over:
        mine.filter(pk__in=over).update(alive_until=now)
    return mine.exclude(pk__in=over).update(alive_until=now + lease(None), seen_at=now)


def _over(row: WorkAttempt, now: datetime) -> bool:
    if not process_alive(row.pid):
        return True
    work = _step_work(row.content_type.model_class(), row.work)
    return (
        work is not None
        and work.time_limit is not None
        and (now > row.running_since + work.time_limit + lease(None))
    )


def hand_over(node: str, now: datetime | None = None) -> int:
    """This node stops: its unfinished attempts expire and are queued again at once."""
    now = now or timezone.now()
    running(WorkAttempt.objects.filter(holder=node)).update(alive_until=now)
    return recover(now + timedelta(microseconds=1))


def recover(now: datetime | None = None) -> int:
    """Queue again every automatic step whose running attempt expired; return how many.

    Each expired attempt is claimed with a conditional UPDATE first, so two
    heartbeats never queue one twice, and a run that has just taken the
    attempt over keeps it. The claim lasts ``RECOVERY_AFTER``: a queued run
    that got lost on the way is queued again after that.
    """
    now = now or timezone.now()
    window = now + timedelta(seconds=workflow_settings.RECOVERY_AFTER)
    queued = 0
    for row in running(WorkAttempt.objects.filter(alive_until__lt=now)).select_related(
        "content_type"
    ):
        model = row.content_type.model_class()
        work = _step_work(model, row.work)
        claim = WorkAttempt.objects.filter(
            pk=row.pk, holder=row.holder, alive_until=row.alive_until
        )
        if work is None or not claim.update(holder=RECOVERING, alive_until=window):
            continue
        enqueue_step(model._meta.label, _pk(model, row.object_id), work.step, work.queue)
        queued += 1
    if queued:
        logger.warning("recovered %d interrupted attempt(s)", queued)
    return queued


def _step_work(model: Any, name: str) -> Any:
    workflow = getattr(model, "workflow", None)
    work = next((w for w in workflow.works if w.name == name), None) if workflow else None
    return work if isinstance(work, StepWork) else None


def _pk(model: Any, object_id: str) -> Any:
    return model._meta.pk.to_python(object_id)


def process_alive(pid: int | None) -> bool:
    """Whether process ``pid`` runs on this host (a zombie counts as gone)."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


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
