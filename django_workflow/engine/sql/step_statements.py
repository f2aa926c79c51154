"""The automatic-step runner's statements, compiled once per model and database.

Each is one round trip: marking an attempt running (an ``INSERT`` whose unique key
is the claim), locking a record in the entry the runner read (returning the whole
row), and the mark that a run of a step is queued (an upsert into ``QueuedRun`` that
only takes a mark nobody holds, or one whose lease ran out). Forgetting the attempt
goes with the record's move where the database allows. The per-record ones go through
the hot cursor (prepared on the server).
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

from django.db import connections

from ...model.columns import STATE_ENTERED_AT
from ...models import QueuedRun, WorkAttempt
from ...reading.attempts_read import holder, lease
from ..attempts import NOT_RUNNING
from .compiled_reads import compiled_select, read_instances
from .cursors import hot_cursor
from .once import keep, kept, once
from .writes import Along, content_type_id, db_value, run

#: The attempt row's unique key.
KEY = ("content_type", "object_id", "work")
#: The queued mark's columns, its unique key first.
MARK = ("content_type", "step", "alive_until")


def start_first_attempt(
    model: Any, pk: Any, work: Any, entered: datetime, clock: datetime, db: str
) -> bool:
    """Mark attempt 1 of ``work`` running for ``pk``, committed at once; ``False`` when
    the record has an attempt row already (another run took it meanwhile)."""
    values = {
        "content_type_id": content_type_id(model, db),
        "object_id": str(pk),
        "work": work.name,
        "round_key": entered,
        "attempts": 0,
        "interruptions": 0,
        "retry_at": None,
        "halted": False,
        "last_error": "",
        **NOT_RUNNING,
        "holder": holder(),
        "pid": os.getpid(),
        "running_since": clock,
        "seen_at": clock,
        "alive_until": clock + lease(work.time_limit),
        "updated_at": clock,
    }
    return _insert(db, values, "DO NOTHING") == 1


def queue_mark(model: Any, step: str, clock: datetime, lasting: timedelta, db: str) -> bool:
    """Take the mark that a run of ``step`` is queued, for ``lasting``; ``False`` when
    someone holds it (its run is queued or running) and its lease has not run out."""
    quote = connections[db].ops.quote_name
    table = quote(QueuedRun._meta.db_table)
    taken = (
        f"DO UPDATE SET {quote('alive_until')} = excluded.{quote('alive_until')} "
        f"WHERE {table}.{quote('alive_until')} < %s"
    )
    until = _stamp(clock + lasting, db)
    return _mark(model, step, until, taken, [_stamp(clock, db)], db) == 1


def renew_mark(model: Any, step: str, clock: datetime, lasting: timedelta, db: str) -> None:
    """Hold the mark for ``lasting`` more, whoever held it (a run queues its follow-up)."""
    quote = connections[db].ops.quote_name
    renewed = f"DO UPDATE SET {quote('alive_until')} = excluded.{quote('alive_until')}"
    _mark(model, step, _stamp(clock + lasting, db), renewed, [], db)


def drop_mark(model: Any, step: str, db: str) -> None:
    QueuedRun.objects.using(db).filter(
        content_type_id=content_type_id(model, db), step=step
    ).delete()


def _stamp(instant: datetime, db: str) -> Any:
    return connections[db].ops.adapt_datetimefield_value(instant)


def _mark(model: Any, step: str, until: Any, on_conflict: str, extra: list[Any], db: str) -> int:
    quote = connections[db].ops.quote_name
    meta = QueuedRun._meta
    columns = ", ".join(quote(meta.get_field(name).column) for name in MARK)
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES (%s, %s, %s) "
        f"ON CONFLICT ({columns[: columns.rindex(',')]}) {on_conflict}"
    )
    with connections[db].cursor() as cursor:
        cursor.execute(sql, [content_type_id(model, db), step, until, *extra])
        return cursor.rowcount


def _insert(db: str, values: dict[str, Any], on_conflict: str) -> int:
    sql, fields = once(_insert_sql, (db, on_conflict), db, on_conflict)
    connection = connections[db]
    params = [db_value(field, values[field.attname], connection) for field in fields]
    with hot_cursor(db) as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _insert_sql(db: str, on_conflict: str) -> tuple[str, list[Any]]:
    meta = WorkAttempt._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    quote = connections[db].ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    values = ", ".join(["%s"] * len(fields))
    unique = ", ".join(quote(meta.get_field(name).column) for name in KEY)
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({values}) "
        f"ON CONFLICT ({unique}) {on_conflict}"
    )
    return sql, fields


def delete_attempt(model: Any, object_id: str, work_name: str, db: str) -> None:
    """Forget the attempt row of ``work_name`` for ``object_id``."""
    run(forgetting(model, object_id, work_name, db), db)


def forgetting(model: Any, object_id: str, work_name: str, db: str) -> Along:
    """The ``DELETE`` of ``delete_attempt``, to send with a move (``move_locked``'s
    ``along``): on PostgreSQL it then costs no round trip of its own."""
    return once(_delete_sql, db, db), [content_type_id(model, db), object_id, work_name]


def _delete_sql(db: str) -> str:
    meta = WorkAttempt._meta
    quote = connections[db].ops.quote_name
    where = " AND ".join(f"{quote(meta.get_field(name).column)} = %s" for name in KEY)
    return f"DELETE FROM {quote(meta.db_table)} WHERE {where}"


def locked_entry(model: Any, step: str, pk: Any, entered: datetime, db: str) -> Any:
    """The record ``pk`` locked for the caller's transaction, if it is still in ``step``
    since ``entered``; ``None`` when it moved on or is gone."""
    key = ("locked", model, db)
    connection = connections[db]
    meta = model._meta
    params = [
        meta.pk.get_db_prep_value(meta.pk.to_python(pk), connection),
        step,
        db_value(meta.get_field(STATE_ENTERED_AT), entered, connection),
    ]
    compiled = kept(_locked_sql, key)
    if compiled is None:
        compiled = _locked_sql(model, step, pk, entered, db)
        if compiled[1] != params:  # the backend bound them in another order: compile each time
            return _read(model, compiled, params, db)
        keep(_locked_sql, key, compiled)
    return _read(model, compiled, params, db)


def _locked_sql(model: Any, step: str, pk: Any, entered: datetime, db: str) -> tuple[Any, ...]:
    """The locking ``SELECT`` as Django writes it (joined parents included), with the
    converters its columns need and the names ``from_db`` takes them by."""
    rows = model._base_manager.db_manager(db).select_for_update()
    rows = rows.filter(pk=pk).filter(**{model.workflow.state_attribute: step})
    rows = rows.filter(**{STATE_ENTERED_AT: entered})
    return compiled_select(rows, db)


def _read(model: Any, compiled: tuple[Any, ...], params: list[Any], db: str) -> Any:
    return next(iter(read_instances(model, compiled, params, db)), None)
