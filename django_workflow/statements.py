"""The worker's hot writes, their SQL built once per model and set of columns.

Django compiles a queryset's SQL again on every call; a poll firing thousands
of deadlines spent more time there than in the database. These functions
build the same statements once and only adapt the values per call, through
the fields' own ``get_db_prep_save``. A log row is saved by the ORM when
someone listens to the log's save signals.
"""

from __future__ import annotations

from typing import Any

from django.db import connections
from django.db.models.signals import post_save, pre_save

from .models import TransitionLog

_sql: dict[tuple[Any, ...], tuple[str, list[Any]]] = {}


def update_row(model: Any, pk: Any, values: dict[str, Any], db: str) -> int:
    """``UPDATE`` the row ``pk`` with ``values``, keyed by the attribute names of columns
    the workflow generated (all on one table); the number of rows written."""
    key = (model, tuple(values), db)
    if key not in _sql:
        _sql[key] = _update_sql(model, list(values), db)
    sql, fields = _sql[key]
    connection = connections[db]
    params = [field.get_db_prep_save(values[field.attname], connection) for field in fields[:-1]]
    params.append(fields[-1].get_db_prep_save(fields[-1].to_python(pk), connection))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _update_sql(model: Any, names: list[str], db: str) -> tuple[str, list[Any]]:
    fields = [model._meta.get_field(name) for name in names]
    # The model that declares the workflow holds its columns: a parent's table, for a child.
    owner = fields[0].model._meta
    quote = connections[db].ops.quote_name
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    sql = f"UPDATE {quote(owner.db_table)} SET {assignments} WHERE {quote(owner.pk.column)} = %s"
    return sql, [*fields, owner.pk]


def insert_log(values: dict[str, Any], db: str) -> None:
    """``INSERT`` a log row of ``values`` (by attribute name) without building an
    instance or reading its key back; ``save()`` when anyone listens to the log's save
    signals."""
    if pre_save.has_listeners(TransitionLog) or post_save.has_listeners(TransitionLog):
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
