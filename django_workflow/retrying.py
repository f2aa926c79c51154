"""Attempts, backoff and halting: the ``Retry`` budget of a unit of work per record.

Attempts are counted per round: for an automatic step, one stay in the step
(its ``state_entered_at``); for a timeout or an every, one deadline (its due
instant), so re-entering the step or moving the anchor starts a fresh budget.
``time_limit`` and exceptions share the budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import transaction

from .declaration import Retry
from .durations import parse_timedelta

#: How long past its time limit an attempt may still be finishing.
TIME_LIMIT_GRACE = timedelta(seconds=30)


@dataclass(frozen=True)
class Claim:
    """The attempt a caller may make now; ``exhausted`` when the budget is spent."""

    number: int
    exhausted: bool = False


def backoff(retry: Retry, attempt: int) -> timedelta:
    """The wait after failed attempt ``attempt``: fixed, or attempt⁴ + 15 s."""
    if retry.backoff == "exponential":
        return timedelta(seconds=attempt**4 + 15)
    return parse_timedelta(retry.backoff)


def _rows(model: Any, db: str) -> Any:
    from .models import WorkAttempt

    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    return WorkAttempt.objects.using(db).filter(content_type=content_type)


def start_attempt(
    model: Any, pk: Any, work: Any, round_key: datetime, now: datetime, db: str, limit: Any
) -> Claim | None:
    """Count the next attempt before it runs, committed; ``None`` when none may start now.

    ``limit`` (the step's time limit, or ``None``) keeps other workers off the
    record while this attempt may still be running.
    """
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    with transaction.atomic(using=db):
        row, _ = (
            _rows(model, db)
            .select_for_update()
            .get_or_create(
                content_type=content_type,
                object_id=str(pk),
                work=work.name,
                defaults={"round_key": round_key},
            )
        )
        if row.round_key != round_key:
            row.round_key, row.attempts, row.retry_at, row.halted = round_key, 0, None, False
        if row.halted or (row.retry_at is not None and row.retry_at > now):
            return None
        if row.attempts >= work.retry.max_attempts:
            return Claim(row.attempts, exhausted=True)
        row.attempts += 1
        running = (parse_timedelta(limit) if limit else timedelta(0)) + TIME_LIMIT_GRACE
        row.retry_at = now + running
        row.save(using=db)
        return Claim(row.attempts)


def current(model: Any, work: Any, rounds: dict[Any, datetime], db: str) -> dict[Any, Any]:
    """The attempt rows of the records in ``rounds`` (pk -> round key) for this round."""
    by_id = {str(pk): pk for pk in rounds}
    rows = _rows(model, db).filter(work=work.name, object_id__in=list(by_id))
    return {
        by_id[row.object_id]: row for row in rows if row.round_key == rounds[by_id[row.object_id]]
    }


def waiting(row: Any, now: datetime) -> bool:
    return row is not None and (row.halted or (row.retry_at is not None and row.retry_at > now))


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
    """Note a failed attempt: wait until ``retry_at``, or halt when it is ``None``."""
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    _rows(model, db).update_or_create(
        content_type=content_type,
        object_id=str(pk),
        work=work.name,
        defaults={
            "round_key": round_key,
            "attempts": attempt,
            "retry_at": retry_at,
            "halted": retry_at is None,
            "last_error": error,
        },
    )


def forget(model: Any, pk: Any, work: Any, db: str) -> None:
    """The work succeeded, or the round ended: its attempts no longer matter."""
    _rows(model, db).filter(object_id=str(pk), work=work.name).delete()
