"""The worker's hot writes, their SQL built once per model and set of columns.

Django compiles a queryset's SQL again on every call; a poll firing thousands
of deadlines spent more time there than in the database. These functions
build the same statements once and only adapt the values per call, as the
fields' own ``get_db_prep_save`` does. A step change's ``UPDATE`` and its log
row are one statement on PostgreSQL. A log row is saved by the ORM when
someone listens to the log's save signals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import chain
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.signals import setting_changed
from django.db import DataError, connections, models
from django.db.models.signals import post_save, pre_save

from ...models import TransitionLog
from .cursors import hot_cursor
from .once import once


def update_logged(
    model: Any,
    pk: Any,
    values: dict[str, Any],
    db: str,
    guard: dict[str, Any] | None = None,
    log: dict[str, Any] | None = None,
    along: Along | None = None,
    questions: Iterable[Question] = (),
    alone: bool = False,
) -> int:
    """``UPDATE`` the row ``pk`` with ``values`` if it still holds ``guard`` (both keyed by
    field name or attribute name of columns on one table: ``fits`` says which may be),
    and the log row ``log`` (by attribute name) inserted with it:
    only while nobody listens to the log's save signals (``logs_quietly``). ``along``
    is a write to another table that belongs with the move (an event's delivery row):
    it is sent the same way, ahead of the ``UPDATE``. ``questions`` about the written
    row are answered in its ``RETURNING`` on PostgreSQL; elsewhere they stay unanswered.

    On PostgreSQL both are one statement, the log row's ``INSERT`` in a ``WITH`` of the
    ``UPDATE``: one round trip, no pipeline. Elsewhere they run one after the other.
    Either way the log row is written even when the guard no longer holds: the caller
    raises ``StaleRecord`` on a count of 0, which rolls its transaction back with it.
    Returns how many rows the ``UPDATE`` wrote.

    ``alone``: the statement is its own transaction (PostgreSQL, autocommit; no
    ``along``, no ``questions``). The log row is then inserted from the ``UPDATE``'s
    ``RETURNING``, so a guard that no longer holds writes neither.
    """
    guard = guard or {}
    connection = connections[db]
    sql, params = _update(model, pk, values, guard, db)
    if alone:
        return _update_alone(sql, params, log, db)
    ahead = [part for part in (log and _insert(log, db), along) if part]
    asked = list(questions) if connection.vendor == "postgresql" else []
    if ahead and connection.vendor == "postgresql":
        names = ", ".join(f"ahead_{n} AS ({part[0]})" for n, part in enumerate(ahead))
        sql, params = f"WITH {names} {sql}", [*chain(*(p for _, p in ahead)), *params]
        ahead = []
    if asked:
        sql = f"{sql} RETURNING {', '.join(f'({q.sql})' for q in asked)}"
        params = [*params, *chain(*(q.params for q in asked))]
    with hot_cursor(db) as cursor:
        for part in ahead:
            cursor.execute(*part)
        cursor.execute(sql, params)
        written = cursor.rowcount
        if asked and written:
            for question, answer in zip(asked, cursor.fetchone(), strict=True):
                question.answer = answer
        return written


def _update_alone(sql: str, params: list[Any], log: dict[str, Any] | None, db: str) -> int:
    if log is not None:
        insert, values = _insert_returned(log, db)
        sql, params = (
            f"WITH moved AS ({sql} RETURNING 1), logged AS ({insert}) SELECT 1 FROM moved",
            [
                *params,
                *values,
            ],
        )
    with hot_cursor(db) as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


@dataclass
class Question:
    """What a hook wants to know of the row a step change's ``UPDATE`` writes, asked in
    that statement (``update_logged``) instead of one of its own: ``sql``, an expression
    over the row (its columns qualified by its table's name), and its ``params``.
    ``answer`` stays ``None`` until it is asked."""

    sql: str
    params: list[Any]
    answer: Any = None


#: A statement and its parameters.
Along = tuple[str, list[Any]]


def run(statement: Along | None, db: str) -> None:
    """Execute ``statement`` (nothing for ``None``)."""
    if statement is not None:
        with hot_cursor(db) as cursor:
            cursor.execute(*statement)


def _update(
    model: Any, pk: Any, values: dict[str, Any], guard: dict[str, Any], db: str
) -> tuple[str, list[Any]]:
    """The ``UPDATE`` of ``update_logged`` and its parameters."""
    nulls = tuple(name for name, value in guard.items() if value is None)
    key = (model, tuple(values), tuple(guard), nulls, db)
    sql, fields = once(_update_sql, key, *key)
    connection = connections[db]
    params = [
        db_value(field, values[name], connection)
        for name, field in zip(values, fields, strict=False)
    ]
    pk_field = fields[len(values)]
    params.append(pk_field.get_db_prep_value(pk_field.to_python(pk), connection))
    for value, field in zip(guard.values(), fields[len(values) + 1 :], strict=True):
        if value is not None:
            params.append(db_value(field, value, connection))
    return sql, params


#: Django's own fields whose ``get_db_prep_save`` passes ``None`` through, and (text and
#: datetime fields) a string or an aware datetime as ``db_value`` does: a subclass, which
#: may adapt its values its own way, is not among them.
_NONE_AS_NULL = {
    models.CharField,
    models.TextField,
    models.DateTimeField,
    models.IntegerField,
    models.PositiveIntegerField,
    models.BigIntegerField,
    models.ForeignKey,
    models.JSONField,
}
_TEXT = {models.CharField, models.TextField}


def db_value(field: Any, value: Any, connection: Any) -> Any:
    """``field.get_db_prep_save(value, connection)``, the same value, without its few
    calls for what the engine writes most: ``None``, the text of a step or a name, the
    instant of an entry or a firing (a log row is a dozen of these, an attempt row more,
    written per record)."""
    kind = type(field)
    if value is None and kind in _NONE_AS_NULL:
        return None
    if kind in _TEXT and isinstance(value, str):
        return value
    if kind is models.DateTimeField and type(value) is datetime and value.tzinfo is not None:
        return _stored_instant(value, connection)
    prepared = field.get_db_prep_save(value, connection)
    # Whatever it was given as ("10000000000", a Decimal), and as psycopg's Int4 too.
    if isinstance(prepared, int) and not isinstance(prepared, bool):
        _in_range(getattr(field, "target_field", field), prepared, connection)
    return prepared


def _in_range(field: Any, value: int, connection: Any) -> None:
    """``DataError`` for an integer its column cannot hold, as ``save()`` meets it: bound on
    the server as a 32-bit integer, PostgreSQL would store it wrapped round. A foreign key
    is checked as the key it points at."""
    if not isinstance(field, models.IntegerField):
        return
    # The column's width only: a positive field's sign is its CHECK's, as save() meets it.
    width = field.get_internal_type().removeprefix("Positive")
    low, high = connection.ops.integer_field_range(width)
    if (low is not None and value < low) or (high is not None and value > high):
        raise DataError(
            f"{field.model._meta.label}.{field.name}: {value} is out of range for "
            f"{width} ({low} to {high})."
        )


#: The stored form of the last instants written, by database alias and instant.
_instants: dict[tuple[str, datetime], Any] = {}
_INSTANTS_KEPT = 64


def _stored_instant(instant: datetime, connection: Any) -> Any:
    """``adapt_datetimefield_value(instant)``, kept for the last instants: a record's few
    instants are written several times each (its entry in the lock, the guard and the log
    row; the clock in its attempt row), and on SQLite each costs a conversion to text.
    Only instants at a fixed offset (``timezone.now()``'s, the database's own) are kept:
    in a zone with summer time two instants an hour apart can compare equal (``fold``)."""
    if type(instant.tzinfo) is not timezone:
        return connection.ops.adapt_datetimefield_value(instant)
    key = (connection.alias, instant)
    stored = _instants.get(key)
    if stored is None:
        if len(_instants) >= _INSTANTS_KEPT:
            _instants.clear()
        _instants[key] = stored = connection.ops.adapt_datetimefield_value(instant)
    return stored


def _forget_instants(setting: str, **kwargs: Any) -> None:
    """An aware instant is stored as ``USE_TZ`` says (refused on SQLite without it)."""
    if setting == "USE_TZ":
        _instants.clear()


setting_changed.connect(_forget_instants)


def fits(model: Any, values: dict[str, Any]) -> bool:
    """Whether ``update_logged`` can write (or guard on) ``values``: plain values (no
    expressions, no model instances) of concrete fields of one table, the table holding
    the workflow's columns."""
    for name, value in values.items():
        if hasattr(value, "resolve_expression") or hasattr(value, "prepare_database_save"):
            return False
        if (model, name) not in _columns:  # asked of every move: answered once per name
            _columns[(model, name)] = _column_of_owner(model, name)
        if not _columns[(model, name)]:
            return False
    return True


_columns: dict[tuple[Any, str], bool] = {}


def _column_of_owner(model: Any, name: str) -> bool:
    """Whether ``name`` is a concrete field on the table holding the workflow's columns."""
    owner = model._meta.get_field(model.workflow.state_attribute).model
    try:
        field = model._meta.get_field(name)
    except LookupError:
        return False
    return bool(getattr(field, "concrete", False)) and field.model is owner


def _update_sql(
    model: Any, names: tuple[str, ...], guarded: tuple[str, ...], nulls: tuple[str, ...], db: str
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


#: ``ContentType.objects`` per database, kept: ``db_manager`` copies the manager on each
#: call (a copy shares the manager's cache, which ``clear_cache`` empties in place).
_content_types: dict[str, Any] = {}


def content_type_id(model: Any, db: str) -> int:
    """The key of ``model``'s content type in ``db``, from the content types' own cache."""
    return content_type(model, db).pk


def content_type(model: Any, db: str) -> Any:
    """``model``'s content type in ``db``, from the content types' own cache."""
    if db not in _content_types:
        _content_types[db] = ContentType.objects.db_manager(db)
    return _content_types[db].get_for_model(model)


def logs_quietly() -> bool:
    """Whether a log row is written without ``save()`` (nobody listens to its signals)."""
    return not (pre_save.has_listeners(TransitionLog) or post_save.has_listeners(TransitionLog))


def insert_log(values: dict[str, Any], db: str) -> None:
    """``INSERT`` a log row of ``values`` (by attribute name) without building an
    instance or reading its key back: for ``log_rows.write`` while nobody listens to the
    log's save signals."""
    with hot_cursor(db) as cursor:
        cursor.execute(*_insert(values, db))


def _insert(values: dict[str, Any], db: str) -> tuple[str, list[Any]]:
    """The log row's ``INSERT`` and its parameters."""
    sql, fields = once(_insert_sql, db, db)
    connection = connections[db]
    return sql, [db_value(field, values[field.attname], connection) for field in fields]


def _insert_returned(values: dict[str, Any], db: str) -> tuple[str, list[Any]]:
    """The log row's ``INSERT`` of one row for each row ``moved`` returns (PostgreSQL)."""
    sql, fields = once(_insert_returned_sql, db, db)
    connection = connections[db]
    return sql, [db_value(field, values[field.attname], connection) for field in fields]


def _insert_returned_sql(db: str) -> tuple[str, list[Any]]:
    """Each value cast to its column's type: in a ``SELECT`` list PostgreSQL reads an
    untyped parameter (a text, a ``NULL``) as text, which an integer or an instant column
    would refuse. Text columns take ``text``, so their length is checked on assignment as
    an ``INSERT ... VALUES`` checks it."""
    meta = TransitionLog._meta
    connection = connections[db]
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    casts = ", ".join(f"%s::{_cast_type(field, connection)}" for field in fields)
    return f"INSERT INTO {quote(meta.db_table)} ({columns}) SELECT {casts} FROM moved", fields


def _cast_type(field: Any, connection: Any) -> str:
    if field.get_internal_type() in ("CharField", "TextField"):
        return "text"
    return str(field.db_type(connection))


def _insert_sql(db: str) -> tuple[str, list[Any]]:
    meta = TransitionLog._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    quote = connections[db].ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    values = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({values})", fields
