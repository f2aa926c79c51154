"""Writing attempt rows: an attempt started, released, failed, forgotten; a halted one
given a fresh budget.

What the rows say (their rounds, backoff, whether one waits) is read through
``attempts_read``, a low module; only the engine writes them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import timezone

from ..errors import TimeLimitExceeded
from ..model.versions import workflow_of
from ..models import WorkAttempt
from ..reading.attempts_read import RECOVERING, holder, lease, rows, running
from ..work import names
from .moves import database

#: Interruptions in a row after which an attempt counts as failed.
POISON_PILL = 3


class PoisonPill(Exception):
    """An attempt was interrupted ``POISON_PILL`` times: its action likely kills its worker."""


@dataclass(frozen=True)
class Claim:
    """The attempt a caller may make now; ``failure`` when it fails before it runs."""

    number: int
    failure: BaseException | None = None


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
    return interrupted_again(row)


def interrupted_again(row: Any) -> PoisonPill | None:
    """Count one more interruption on ``row``; the failure it amounts to at ``POISON_PILL``."""
    row.interruptions += 1
    if row.interruptions >= POISON_PILL:
        return PoisonPill(f"the attempt was interrupted {row.interruptions} times (poison pill)")
    return None


def release(model: Any, pk: Any, work: Any, db: str) -> None:
    """This process gives up the attempt unfinished: it expires now, for another run to take
    over (as an interruption, not a spent attempt)."""
    held = running(rows(model, db)).filter(object_id=str(pk), work=work.name, pid=os.getpid())
    held.update(alive_until=timezone.now())


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


def retry_halted(record: Any) -> bool:
    """Give the halted automatic step of ``record`` a fresh budget; ``False`` when its
    step is not automatic (any more) or its attempts are not halted."""
    workflow = workflow_of(record)
    declared = workflow.steps.get(record.workflow.current_step)
    if declared is None or not declared.is_automatic:  # it ran, or was left, meanwhile
        return False
    work = names.step_work(record.workflow.current_step)
    halted = rows(type(record), database(record)).filter(
        object_id=str(record.pk), work=work, halted=True
    )
    return bool(halted.delete()[0])
