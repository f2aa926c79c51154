"""The worker's hot writes, their SQL built once per model and set of columns.

Django compiles a queryset's SQL again on every call; a poll firing thousands
of deadlines spent more time there than in the database. These functions
build the same statements once and only adapt the values per call, through
the fields' own ``get_db_prep_save``. A log row is saved by the ORM when
someone listens to the log's save signals.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections
from django.db.models.signals import post_save, pre_save

from .models import TransitionLog

try:
    import psycopg
except ImportError:  # psycopg 2, or no PostgreSQL at all
    psycopg = None  # type: ignore[assignment]

_sql: dict[tuple[Any, ...], tuple[str, list[Any]]] = {}


def update_row(
    model: Any, pk: Any, values: dict[str, Any], db: str, guard: dict[str, Any] | None = None
) -> Any:
    """``UPDATE`` the row ``pk`` with ``values`` if it still holds ``guard``; both keyed by
    field name or attribute name of columns on one table (``fits`` says which may be).
    Returns the cursor: its ``rowcount`` says how many rows were written, once the
    statement ran (at the end of a ``pipelined`` block)."""
    guard = guard or {}
    nulls = tuple(name for name, value in guard.items() if value is None)
    key = (model, tuple(values), tuple(guard), nulls, db)
    if key not in _sql:
        _sql[key] = _update_sql(model, list(values), list(guard), nulls, db)
    sql, fields = _sql[key]
    connection = connections[db]
    params = [
        field.get_db_prep_save(values[name], connection)
        for name, field in zip(values, fields, strict=False)
    ]
    pk_field = fields[len(values)]
    params.append(pk_field.get_db_prep_value(pk_field.to_python(pk), connection))
    for value, field in zip(guard.values(), fields[len(values) + 1 :], strict=True):
        if value is not None:
            params.append(field.get_db_prep_value(value, connection, prepared=False))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.cursor


def fits(model: Any, values: dict[str, Any]) -> bool:
    """Whether ``update_row`` can write (or guard on) ``values``: plain values (no
    expressions, no model instances) of concrete fields of one table, the table holding
    the workflow's columns."""
    owner = model._meta.get_field(model.workflow.state_attribute).model
    for name, value in values.items():
        if hasattr(value, "resolve_expression") or hasattr(value, "prepare_database_save"):
            return False
        try:
            field = model._meta.get_field(name)
        except LookupError:
            return False
        if not getattr(field, "concrete", False) or field.model is not owner:
            return False
    return True


def _update_sql(
    model: Any, names: list[str], guarded: list[str], nulls: tuple[str, ...], db: str
) -> tuple[str, list[Any]]:
    fields = [model._meta.get_field(name) for name in names]
    # The model that declares the workflow holds its columns: a parent's table, for a child.
    owner = fields[0].model._meta
    guards = [model._meta.get_field(name) for name in guarded]
    quote = connections[db].ops.quote_name
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    conditions = [f"{quote(owner.pk.column)} = %s"]
    for name, field in zip(guarded, guards, strict=True):
        test = "IS NULL" if name in nulls else "= %s"
        conditions.append(f"{quote(field.column)} {test}")
    where = " AND ".join(conditions)
    sql = f"UPDATE {quote(owner.db_table)} SET {assignments} WHERE {where}"
    return sql, [*fields, owner.pk, *guards]


@contextmanager
def pipelined(db: str) -> Iterator[None]:
    """Send the statements run inside to the server together, in one round trip as the
    block ends (psycopg 3's pipeline mode, on PostgreSQL); elsewhere each runs at once.

    Only for statements whose results nobody reads before the block ends: no
    ``Model.save()`` or receiver of a signal may run inside (an ``UPDATE``'s row
    count is not known until then).
    """
    connection = connections[db]
    connection.ensure_connection()
    driver = connection.connection
    if connection.vendor != "postgresql" or not _pipelines(driver):
        yield
        return
    with driver.pipeline():
        yield


def _pipelines(driver: Any) -> bool:
    """Whether ``driver`` is a psycopg 3 connection whose libpq has pipeline mode."""
    return (
        psycopg is not None
        and isinstance(driver, psycopg.Connection)
        and psycopg.Pipeline.is_supported()
    )


def logs_quietly() -> bool:
    """Whether a log row is written without ``save()`` (nobody listens to its signals)."""
    return not (pre_save.has_listeners(TransitionLog) or post_save.has_listeners(TransitionLog))


def insert_log(values: dict[str, Any], db: str) -> None:
    """``INSERT`` a log row of ``values`` (by attribute name) without building an
    instance or reading its key back; ``save()`` when anyone listens to the log's save
    signals."""
    if not logs_quietly():
        TransitionLog(**values).save(using=db)
        return
    key = (TransitionLog, "insert", db)
    if key not in _sql:
        _sql[key] = _insert_sql(db)
    sql, fields = _sql[key]
    connection = connections[db]
    params = [field.get_db_prep_save(values[field.attname], connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _insert_sql(db: str) -> tuple[str, list[Any]]:
    meta = TransitionLog._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    quote = connections[db].ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    values = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({values})", fields
