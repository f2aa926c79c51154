"""Attempts, backoff and halting: the ``Retry`` budget of a unit of work per record.

Attempts are counted per round: for an automatic step, one stay in the step
(its ``state_entered_at``); for a timeout or an every, one deadline (its due
instant), so re-entering the step or moving the anchor starts a fresh budget.
Exceptions and ``time_limit`` share the budget. An attempt cut short by a
stop or a crash spends nothing: it is an interruption, and only
``POISON_PILL`` interruptions in a row count as one failed attempt.

While an automatic step's action runs, its attempt row names the worker
(``holder``) and stays alive until ``alive_until``, which a worker's
heartbeat renews; past it, the attempt is taken over as interrupted.

This module reads the rows and says what they mean (status, undo, the poll and
the admin use it without loading the engine); ``engine.attempts`` writes them.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta
from typing import Any

from croniter import croniter
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from ..conf import workflow_settings
from ..declaration import Retry
from ..durations import parse_timedelta
from ..models import WorkAttempt

#: Names this process's workers while ``workflow_worker`` runs them (its heartbeat renews them).
NODE_VARIABLE = "DJANGO_WORKFLOW_NODE"
#: The holder of an attempt whose worker died and whose step was queued again.
RECOVERING = "(recovering)"


def backoff(retry: Retry, attempt: int) -> timedelta:
    """The wait after failed attempt ``attempt``: fixed, or attempt⁴ + 15 s."""
    if retry.backoff == "exponential":
        return timedelta(seconds=attempt**4 + 15)
    return parse_timedelta(retry.backoff)


def polled(work: Any) -> bool:
    """Whether a poll runs ``work``'s next attempt (the precise timeline runs its own)."""
    return work.queued or (work.scheduler == "polling" and not work.self_scheduled)


def runs_at(workflow: Any, work: Any, retry_at: datetime) -> datetime:
    """When the attempt allowed from ``retry_at`` really starts, give or take django-q2's
    30-second look at its Schedules.

    Nothing wakes up at ``retry_at`` itself: an automatic step is queued again by its
    poll, the first tick of its ``check_interval`` at or after ``retry_at``, and a polled
    deadline fires with the first poll of any of its model's deadline groups from then.
    Only the precise timeline fires at the instant.
    """
    if not polled(work):
        return retry_at
    crons = {work.check_interval}
    if not work.queued:
        polls = [w for works in workflow.deadline_works.values() for w in works if polled(w)]
        crons |= {w.check_interval for w in polls}
    return min(_first_tick(cron, retry_at) for cron in crons)


def _first_tick(cron: str, at: datetime) -> datetime:
    """The first tick of ``cron`` at or after ``at``, in the zone django-q2 reads crons in."""
    start = timezone.localtime(at) - timedelta(microseconds=1)  # croniter counts strictly after
    return croniter(cron, start).get_next(datetime)


def holder() -> str:
    """Who runs attempts in this process: the worker node, or this host and process."""
    return os.environ.get(NODE_VARIABLE) or f"{socket.gethostname()}:{os.getpid()}"


def lease(time_limit: timedelta | None) -> timedelta:
    """How long a running attempt counts as alive without a heartbeat renewing it."""
    recovery = timedelta(seconds=workflow_settings.RECOVERY_AFTER)
    if os.environ.get(NODE_VARIABLE):
        return recovery / 2  # renewed by the node's heartbeat
    return recovery + (time_limit or timedelta(0))


def rows(model: Any, db: str) -> Any:
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    return WorkAttempt.objects.using(db).filter(content_type=content_type)


def running(attempts: Any) -> Any:
    """The attempts in ``attempts`` that some worker runs now (or ran until it died)."""
    return attempts.filter(running_since__isnull=False)


def current(model: Any, work: Any, rounds: dict[Any, datetime], db: str) -> dict[Any, Any]:
    """The attempt rows of the records in ``rounds`` (pk -> round key) for this round."""
    by_id = {str(pk): pk for pk in rounds}
    found = rows(model, db).filter(work=work.name, object_id__in=list(by_id))
    return {
        by_id[row.object_id]: row for row in found if row.round_key == rounds[by_id[row.object_id]]
    }


def waiting(row: Any, now: datetime) -> bool:
    """Whether no attempt may start now: halted, backing off, or running elsewhere."""
    if row is None:
        return False
    if row.running_since is not None and row.alive_until is not None and row.alive_until > now:
        return True
    return row.halted or (row.retry_at is not None and row.retry_at > now)
