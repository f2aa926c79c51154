"""A running attempt's lease (docs/worker.md, "Interrupted work"): renewed while its
worker's heartbeat beats, expired when its process is gone or its step's time limit has
passed, and claimed for recovery by one heartbeat at a time. The worker's heartbeat
(``worker.recovery``) queues the claimed steps again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from ..conf import workflow_settings
from ..models import WorkAttempt
from ..reading.attempts_read import RECOVERING, lease, running
from ..work import StepWork


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


def expire(node: str, now: datetime) -> None:
    """This node stops: its unfinished attempts expire now."""
    running(WorkAttempt.objects.filter(holder=node)).update(alive_until=now)


def claim_expired(now: datetime) -> Iterator[tuple[Any, Any, StepWork]]:
    """Claim each running attempt whose lease expired before ``now``, one at a time:
    ``(model, pk, work)`` of each step to queue again, yielded as soon as it is claimed.

    Each is claimed with a conditional UPDATE, so two heartbeats never claim one twice,
    and a run that has just taken the attempt over keeps it. The claim lasts
    ``RECOVERY_AFTER``: a queued run that got lost on the way is claimed again after that.
    """
    window = now + timedelta(seconds=workflow_settings.RECOVERY_AFTER)
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
        yield model, model._meta.pk.to_python(row.object_id), work


def _step_work(model: Any, name: str) -> Any:
    workflow = getattr(model, "workflow", None)
    work = next((w for w in workflow.all_works if w.name == name), None) if workflow else None
    return work if isinstance(work, StepWork) else None


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
