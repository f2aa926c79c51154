"""An upgrade's writes on PostgreSQL: the records of one version and step of a batch, their
new version (and step), their due instants and their log rows in one statement.

The due instants are computed by the statement from the row where the target step's
deadlines allow (``due_expression``: calendar timeouts), else in Python by the target
version and sent as an array beside the locked keys (``unnest``). The log rows are
inserted from the ``UPDATE``'s ``RETURNING``, so a record whose version or step changed
meanwhile writes neither.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import connections

from ...model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from ...model.triggers import WorkKind
from ...models import TransitionLog
from .cursors import hot_cursor
from .writes import _cast_type, db_value

#: The log's columns the moved row fills: its key, and the entry of the stay that goes on.
FROM_ROW = {"object_id": "moved.id::text", "from_state_entered_at": "moved.entered"}


def move_group(
    model: Any,
    keys: list[Any],
    dues: list[Any] | None,
    changes: dict[str, Any],
    guard: dict[str, Any],
    log: dict[str, Any] | None,
    db: str,
) -> int:
    """Write ``changes`` and each key's due instant of ``dues`` (in the order of ``keys``;
    ``None`` for a model without deadlines) to the rows of ``keys`` still holding
    ``guard``, with a log row of ``log`` (by attribute name) for each; how many moved."""
    connection = connections[db]
    meta, quote = model._meta, connection.ops.quote_name
    pk_type = meta.pk.db_type(connection)
    sets, params = _sets(model, changes, connection)
    if dues is None:
        source, more = f"unnest(%s::{pk_type}[]) AS d(id)", [keys]
    else:
        due_field = meta.get_field(NEXT_DUE_AT)
        sets.append(f"{quote(due_field.column)} = d.due")
        source = f"unnest(%s::{pk_type}[], %s::timestamptz[]) AS d(id, due)"
        more = [keys, [db_value(due_field, due, connection) for due in dues]]
    key = f"{quote(meta.db_table)}.{quote(meta.pk.column)}"
    return _run(model, sets, [*params, *more], f"FROM {source} WHERE {key} = d.id", guard, log, db)


def move_range(
    model: Any,
    first: Any,
    last: Any,
    due: tuple[str, list[Any]] | None,
    changes: dict[str, Any],
    guard: dict[str, Any],
    log: dict[str, Any] | None,
    db: str,
) -> int:
    """``move_group`` for the rows with keys from ``first`` to ``last`` holding ``guard``,
    their due instant computed by the statement from the row (``due_expression``)."""
    connection = connections[db]
    meta, quote = model._meta, connection.ops.quote_name
    sets, params = _sets(model, changes, connection)
    if due is not None:
        sets.append(f"{quote(meta.get_field(NEXT_DUE_AT).column)} = {due[0]}")
        params += due[1]
    key = f"{quote(meta.db_table)}.{quote(meta.pk.column)}"
    where = f"WHERE {key} BETWEEN %s AND %s"
    return _run(model, sets, [*params, first, last], where, guard, log, db)


def due_expression(
    model: Any, works: tuple[Any, ...], changes: dict[str, Any], db: str
) -> tuple[str, list[Any]] | None:
    """``next_due_at`` as the statement can compute it from the row, for a step whose
    deadlines are all timeouts counted in calendar time from a column of the row (a fired
    action timeout no longer counts); ``None`` when one is not (business days, an every,
    an SLA, a calculation, ...: ``next_due`` computes those)."""
    connection = connections[db]
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    parts, params = [], []
    for work in works:
        anchor = _column(model, work.deadline.field)
        after = work.deadline.fire_after
        if work.kind != WorkKind.TIMEOUT or anchor is None or work.deadline.field in changes:
            return None
        if after is not None and not isinstance(after, timedelta):
            return None
        part = f"{table}.{quote(anchor)}" + ("" if after is None else " + %s::interval")
        params += [] if after is None else [after]
        if work.fired_field and work.fired_field not in changes:  # fired: not due again
            fired = quote(model._meta.get_field(work.fired_field).column)
            part = f"CASE WHEN {table}.{fired} IS NULL THEN {part} END"
        parts.append(part)
    if not parts:
        return "NULL", []
    return (parts[0] if len(parts) == 1 else f"LEAST({', '.join(parts)})"), params


def _column(model: Any, name: str) -> str | None:
    """The column of the model's concrete field ``name``; ``None`` for anything else."""
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return None
    return field.column if field.concrete and not field.is_relation else None


def _sets(model: Any, changes: dict[str, Any], connection: Any) -> tuple[list[str], list[Any]]:
    quote = connection.ops.quote_name
    fields = [model._meta.get_field(name) for name in changes]
    sets = [f"{quote(field.column)} = %s" for field in fields]
    pairs = zip(fields, changes.values(), strict=True)
    return sets, [db_value(field, value, connection) for field, value in pairs]


def _run(
    model: Any,
    sets: list[str],
    params: list[Any],
    where: str,
    guard: dict[str, Any],
    log: dict[str, Any] | None,
    db: str,
) -> int:
    connection = connections[db]
    meta, quote = model._meta, connection.ops.quote_name
    table = quote(meta.db_table)
    conditions = [where]
    for name, value in guard.items():
        field = meta.get_field(name)
        conditions.append(f"{table}.{quote(field.column)} = %s")
        params.append(db_value(field, value, connection))
    entered = quote(meta.get_field(STATE_ENTERED_AT).column)
    sql = (
        f"UPDATE {table} SET {', '.join(sets)} {' AND '.join(conditions)} "
        f"RETURNING {table}.{quote(meta.pk.column)} AS id, {table}.{entered} AS entered"
    )
    if log is not None:
        insert, values = _log_insert(log, connection)
        sql, params = f"WITH moved AS ({sql}) {insert}", [*params, *values]
    with hot_cursor(db) as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _log_insert(log: dict[str, Any], connection: Any) -> tuple[str, list[Any]]:
    meta = TransitionLog._meta
    quote = connection.ops.quote_name
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    selected, values = [], []
    for field in fields:
        if field.attname in FROM_ROW:
            selected.append(FROM_ROW[field.attname])
        else:
            selected.append(f"%s::{_cast_type(field, connection)}")
            values.append(db_value(field, log[field.attname], connection))
    columns = ", ".join(quote(field.column) for field in fields)
    insert = (
        f"INSERT INTO {quote(meta.db_table)} ({columns}) SELECT {', '.join(selected)} FROM moved"
    )
    return insert, values
