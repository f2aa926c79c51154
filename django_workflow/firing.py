"""Running a unit of work: claim the due records, fire each exactly once.

Claims lock rows with ``SELECT … FOR UPDATE SKIP LOCKED`` on PostgreSQL, so
any number of processes may run the same work at the same moment; SQLite
has a single writer. The claim, the action's writes, the fired column and
the log row commit together: a crash loses nothing and repeats nothing.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.db.models.sql import UpdateQuery
from django.utils import timezone

from . import engine, probes, retrying
from .scheduling import due_at
from .signals import work_failed, work_fired, work_halted
from .work import Work

logger = logging.getLogger("django_workflow")

BATCH_SIZE = 500


def run_work(
    model: Any, work_name: str, *, now: datetime | None = None, batch_size: int = BATCH_SIZE
) -> int:
    """Fire ``work_name`` for every record of ``model`` due at ``now``; return how many fired."""
    work = model.workflow.work(work_name)
    now = now or timezone.now()
    db = router.db_for_write(model)
    if not probes.due(model, [work], now, db):  # an idle poll is this one indexed query
        return 0
    if work.kind == "step":
        fired = _run_steps(model, work, now, db, batch_size)
    elif work.transition_to is not None:
        fired = _run_transitions(model, work, now, db, batch_size)
    else:
        fired = _run_actions(model, work, now, db, batch_size)
    if fired:
        logger.info("%s: %s fired for %d record(s)", model._meta.label, work.name, fired)
        work_fired.send(sender=model, work=work.name, count=fired)
    return fired


def _matching(model: Any, work: Work, now: datetime, db: str, skip: set[Any]) -> Any:
    rows = probes.matching(model, work, now, db)
    return rows.exclude(pk__in=skip) if skip else rows


def _candidates(model: Any, work: Work, now: datetime, db: str, skip: set[Any]) -> Any:
    return _matching(model, work, now, db, skip).select_for_update(skip_locked=True)


def _is_due(work: Work, record: Any, now: datetime) -> bool:
    if work.exact:
        return True
    due = due_at(work, record)
    return due is not None and due <= now


def _run_steps(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> int:
    moved, skip = 0, set()
    while True:
        pks = list(_matching(model, work, now, db, skip).values_list("pk", flat=True)[:batch_size])
        for pk in pks:
            if engine.run_step(model, pk, work.step, now=now) is None:
                skip.add(pk)
            else:
                moved += 1
        if len(pks) < batch_size:
            return moved


def _run_transitions(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> int:
    """Transition timeouts move whole batches with one UPDATE."""
    changes = engine.entry_changes(model.workflow, work.transition_to, now)
    fired, skip = 0, set()
    while True:
        with transaction.atomic(using=db):
            candidates = _candidates(model, work, now, db, skip)[:batch_size]
            if work.exact:
                due = _move(model, candidates, changes, db)
                claimed = due
            else:
                records = list(candidates)
                claimed = [record.pk for record in records]
                due = [record.pk for record in records if _is_due(work, record, now)]
                skip.update(set(claimed) - set(due))
                model._base_manager.using(db).filter(pk__in=due).update(**changes)
            event = engine.Event(work.step, work.transition_to, work.log_name, "timeout")
            engine.after_bulk_change(model, due, event, db)
        fired += len(due)
        if len(claimed) < batch_size:
            return fired


def _move(model: Any, claim: Any, changes: dict[str, Any], db: str) -> list[Any]:
    """Claim and update in one statement where the database can return the rows it updated."""
    connection = connections[db]
    rows = model._base_manager.using(db)
    if model._meta.parents or not connection.features.can_return_columns_from_insert:
        pks = list(claim.values_list("pk", flat=True))
        rows.filter(pk__in=pks).update(**changes)
        return pks
    query = rows.filter(pk__in=claim.values("pk")).query.chain(UpdateQuery)
    query.add_update_values(changes)
    sql, params = query.get_compiler(using=db).as_sql()
    pk = model._meta.pk
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} RETURNING {connection.ops.quote_name(pk.column)}", params)
        return [pk.to_python(row[0]) for row in cursor.fetchall()]


def _run_actions(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> int:
    """Action timeouts and every: one record at a time, each in its own savepoint."""
    fired, skip = 0, set()
    while True:
        with transaction.atomic(using=db):
            records = list(_candidates(model, work, now, db, skip)[:batch_size])
            rounds = {record.pk: due_at(work, record) for record in records}
            attempts = retrying.current(model, work, rounds, db)
            for record in records:
                due, row = rounds[record.pk], attempts.get(record.pk)
                if due is None or due > now or retrying.waiting(row, now):
                    skip.add(record.pk)
                elif _fire_action(record, work, now, db, due, row):
                    fired += 1
                else:
                    skip.add(record.pk)
        if len(records) < batch_size:
            return fired


def _fire_action(record: Any, work: Work, now: datetime, db: str, due: datetime, row: Any) -> bool:
    try:
        with transaction.atomic(using=db):
            getattr(record, work.action)()
            for column in work.fired_together or (work.last_fired_field,):
                setattr(record, column, now)
            # save() clears the fired columns again if the action moved the anchor later.
            record.save()
            engine.log_event(
                record, engine.Event(work.step, work.step, work.log_name, "timeout"), db
            )
    except Exception as error:
        logger.exception("%s %s: %s failed", type(record).__name__, record.pk, work.name)
        _action_failed(record, work, now, db, due, (row.attempts if row else 0) + 1, error)
        return False
    if row is not None:
        retrying.forget(type(record), record.pk, work, db)
    return True


def _action_failed(
    record: Any, work: Work, now: datetime, db: str, due: datetime, attempt: int, error: Exception
) -> None:
    """Retry after the backoff, or halt for this round; a failure never marks it fired."""
    model = type(record)
    retry_at = None
    if attempt < work.retry.max_attempts:
        retry_at = now + retrying.backoff(work.retry, attempt)
    text = f"{type(error).__name__}: {error}"
    retrying.record_failure(model, record.pk, work, due, attempt, retry_at, text, db)
    trigger = "failed" if retry_at else "halted"
    event = engine.Event(work.step, work.step, work.log_name, trigger, None, error, attempt)
    engine.log_event(record, event, db)
    signal, extra = (work_failed, {"retry_at": retry_at}) if retry_at else (work_halted, {})
    engine.send_after_commit(signal, model, record.pk, work, attempt, error, db, **extra)
