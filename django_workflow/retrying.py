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
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from croniter import croniter
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import timezone

from .conf import workflow_settings
from .declaration import Retry
from .durations import parse_timedelta
from .errors import TimeLimitExceeded
from .models import WorkAttempt

#: Interruptions in a row after which an attempt counts as failed.
POISON_PILL = 3
#: Names this process's workers while ``workflow_worker`` runs them (its heartbeat renews them).
NODE_VARIABLE = "DJANGO_WORKFLOW_NODE"
#: The holder of an attempt whose worker died and whose step was queued again.
RECOVERING = "(recovering)"


class PoisonPill(Exception):
    """An attempt was interrupted ``POISON_PILL`` times: its action likely kills its worker."""


@dataclass(frozen=True)
class Claim:
    """The attempt a caller may make now; ``failure`` when it fails before it runs."""

    number: int
    failure: BaseException | None = None


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


def start_attempt(
    model: Any, pk: Any, work: Any, round_key: datetime, now: datetime, db: str
) -> Claim | None:
    """Mark the next attempt running, committed; ``None`` when none may start now.

    ``now`` is the instant the caller works at (rounds and backoff); the lease
    is kept on the clock, however long the caller has been running.
    """
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    clock = timezone.now()
    with transaction.atomic(using=db):
        row, _ = (
            rows(model, db)
            .select_for_update()
            .get_or_create(
                content_type=content_type,
                object_id=str(pk),
                work=work.name,
                defaults={"round_key": round_key},
            )
        )
        if row.round_key != round_key:
            _new_round(row, round_key)
        if row.running_since is not None:
            alive = row.alive_until is not None and row.alive_until > clock
            if alive and row.holder != RECOVERING:
                return None  # running elsewhere
            failure = _interrupted(row, work)
            if failure is not None:
                row.save(using=db)
                return Claim(row.attempts + 1, failure)
        if row.halted or (row.retry_at is not None and row.retry_at > now):
            row.save(using=db)
            return None
        row.holder, row.pid = holder(), os.getpid()
        row.running_since = row.seen_at = clock
        row.alive_until = clock + lease(work.time_limit)
        row.save(using=db)
        return Claim(row.attempts + 1)


def _new_round(row: WorkAttempt, round_key: datetime) -> None:
    row.round_key, row.attempts, row.interruptions = round_key, 0, 0
    row.retry_at, row.halted, row.last_error = None, False, ""
    _stop_running(row)


#: The attempt row of work that is not running.
NOT_RUNNING = {
    "holder": "",
    "pid": None,
    "running_since": None,
    "seen_at": None,
    "alive_until": None,
}


def _stop_running(row: WorkAttempt) -> None:
    for name, value in NOT_RUNNING.items():
        setattr(row, name, value)


def _interrupted(row: WorkAttempt, work: Any) -> BaseException | None:
    """Count an attempt whose worker stopped or died; the failure it amounts to, if any.

    The count starts again only where the failure is recorded as a spent attempt
    (``record_failure``), in the same write that counts it.
    """
    started, seen = row.running_since, row.seen_at
    _stop_running(row)
    if work.time_limit is not None and seen is not None and seen >= started + work.time_limit:
        return TimeLimitExceeded(f"the attempt ran past its time limit ({work.time_limit})")
    row.interruptions += 1
    if row.interruptions >= POISON_PILL:
        return PoisonPill(f"the attempt was interrupted {row.interruptions} times (poison pill)")
    return None


def release(model: Any, pk: Any, work: Any, db: str) -> None:
    """This process gives up the attempt unfinished: it expires now, for another run to take
    over (as an interruption, not a spent attempt)."""
    held = running(rows(model, db)).filter(object_id=str(pk), work=work.name, pid=os.getpid())
    held.update(alive_until=timezone.now())


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


def record_failure(
    model: Any,
    pk: Any,
    work: Any,
    round_key: datetime,
    attempt: int,
    retry_at: Any,
    error: str,
    db: str,
) -> None:
    """Note a spent attempt: wait until ``retry_at``, or halt when it is ``None``."""
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    rows(model, db).update_or_create(
        content_type=content_type,
        object_id=str(pk),
        work=work.name,
        defaults={
            "round_key": round_key,
            "attempts": attempt,
            "interruptions": 0,
            "retry_at": retry_at,
            "halted": retry_at is None,
            "last_error": error,
            **NOT_RUNNING,
        },
    )


def forget(model: Any, pk: Any, work: Any, db: str) -> None:
    """The work succeeded, or the round ended: its attempts no longer matter."""
    rows(model, db).filter(object_id=str(pk), work=work.name).delete()
