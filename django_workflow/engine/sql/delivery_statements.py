"""The statements of a delivery (``receiving``), compiled once per model and database.

A delivery is a handful of statements, each a round trip, and Django compiling a
queryset again on every call cost more than the database's work. Here: the delivery
row's ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (the unique ``(event, event_id)``
decides a duplicate without an error, so without a savepoint to undo one), the record
holding a key (locked or not), the highest applied ``seq``, the buffered deliveries
waiting for one record, and the outcome's ``UPDATE``. Delivery rows are written
without ``save()``: no save signals.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db import connections, models

from ...model.triggers import Outcome
from ...models import EventDelivery
from .compiled_reads import compiled_select, read_instances
from .cursors import hot_cursor
from .once import keep, kept, once
from .writes import Along, Question, run


def insert_first(row: EventDelivery, db: str) -> bool:
    """Insert ``row`` as the first delivery of its ``(event, event_id)``, or, when one
    that is no duplicate is stored, as a ``duplicate``: ``False`` then. On PostgreSQL
    one statement (the duplicate's ``INSERT`` in a ``WITH``), and an insert racing an
    uncommitted one of the same id waits for its end (and goes on if that rolled back)."""
    connection = connections[db]
    params = _insert_params(row, connection)
    if connection.vendor != "postgresql":
        if _inserted(row, once(_insert_sql, db, db), params, db):
            return True
        row.outcome = Outcome.DUPLICATE  # outside the unique constraint: always inserted
        _inserted(row, once(_insert_sql, db, db), _insert_params(row, connection), db)
        return False
    again = list(params)  # the same row stored as a duplicate
    again[_outcome_at()] = row.outcome = Outcome.DUPLICATE
    first = _inserted(row, once(_first_or_again_sql, db, db), [*params, *again], db)
    if first:
        row.outcome = Outcome.UNMATCHED
    return first


def _inserted(row: EventDelivery, sql: str, params: list[Any], db: str) -> bool:
    """Run an ``INSERT`` of ``row``; whether it stored a first delivery (a row whose
    second column, when there is one, is false)."""
    with hot_cursor(db) as cursor:
        cursor.execute(sql, params)
        stored = cursor.fetchone()
    if stored is None:
        return False
    row.pk = stored[0]
    row._state.adding, row._state.db = False, db
    return len(stored) == 1 or not stored[1]


def _insert_params(row: EventDelivery, connection: Any) -> list[Any]:
    fields = _insert_fields()
    return [field.get_db_prep_save(field.pre_save(row, True), connection) for field in fields]


@cache
def _insert_fields() -> list[Any]:
    return [field for field in EventDelivery._meta.local_concrete_fields if not field.primary_key]


@cache
def _outcome_at() -> int:
    return [field.attname for field in _insert_fields()].index("outcome")


def _insert_sql(db: str) -> str:
    quote = connections[db].ops.quote_name
    columns = ", ".join(quote(field.column) for field in _insert_fields())
    marks = ", ".join(["%s"] * len(_insert_fields()))
    return (
        f"INSERT INTO {quote(EventDelivery._meta.db_table)} ({columns}) VALUES ({marks}) "
        f"ON CONFLICT DO NOTHING RETURNING {quote(EventDelivery._meta.pk.column)}"
    )


def _first_or_again_sql(db: str) -> str:
    """The first delivery's ``INSERT``, and the duplicate's when it inserted nothing:
    ``(pk, whether a duplicate)``."""
    quote = connections[db].ops.quote_name
    pk = quote(EventDelivery._meta.pk.column)
    columns = ", ".join(quote(field.column) for field in _insert_fields())
    marks = ", ".join(["%s"] * len(_insert_fields()))
    return (
        f"WITH first AS ({_insert_sql(db)}), again AS (INSERT INTO "
        f"{quote(EventDelivery._meta.db_table)} ({columns}) SELECT {marks} "
        f"WHERE NOT EXISTS (SELECT 1 FROM first) RETURNING {pk}) "
        f"SELECT {pk}, FALSE FROM first UNION ALL SELECT {pk}, TRUE FROM again"
    )


def settle(row: EventDelivery, db: str) -> None:
    """Write ``row``'s outcome, record and instant of application."""
    run(settling(row, db), db)


def settling(row: EventDelivery, db: str) -> Along:
    """``settle``'s statement, for a move to take along."""
    connection = connections[db]
    field = EventDelivery._meta.get_field("applied_at")
    applied_at = field.get_db_prep_save(row.applied_at, connection)
    return once(_settle_sql, db, db), [row.outcome, row.object_id, applied_at, row.pk]


def _settle_sql(db: str) -> str:
    meta = EventDelivery._meta
    quote = connections[db].ops.quote_name
    return (
        f"UPDATE {quote(meta.db_table)} SET {quote('outcome')} = %s, "
        f"{quote('object_id')} = %s, {quote('applied_at')} = %s "
        f"WHERE {quote(meta.pk.column)} = %s"
    )


def highest_seq(content_type_id: int, object_id: str, event: str, db: str) -> int | None:
    """The highest ``seq`` among the applied deliveries of ``event`` for a record."""
    with hot_cursor(db) as cursor:
        cursor.execute(once(_seq_sql, db, db), [content_type_id, object_id, event])
        return cursor.fetchone()[0]


def _seq_sql(db: str) -> str:
    quote = connections[db].ops.quote_name
    return (
        f"SELECT MAX({quote('seq')}) FROM {quote(EventDelivery._meta.db_table)} "
        f"WHERE {quote('content_type_id')} = %s AND {quote('object_id')} = %s "
        f"AND {quote('event')} = %s AND {quote('outcome')} = '{Outcome.APPLIED.value}'"
    )  # the outcome written out: the partial index serves a generic plan then


def holding(model: Any, key_field: str, value: Any, db: str, lock: bool) -> Any:
    """The record whose ``key_field`` holds ``value`` (the first by key), locked for the
    caller's transaction when ``lock``; ``None`` when none does."""
    key = (model, key_field, lock, db)
    compiled = kept(compiled_select, key)
    field = model._meta.get_field(key_field)
    params = [field.get_db_prep_value(value, connections[db])]
    if compiled is None:
        rows = model._base_manager.db_manager(db).filter(**{key_field: value}).order_by("pk")
        rows = rows.select_for_update() if lock else rows
        compiled = compiled_select(rows[:1], db)
        if compiled[1] != params:  # bound otherwise than as the field prepares it
            return rows.first()
        keep(compiled_select, key, compiled)
    return next(iter(read_instances(model, compiled, params, db)), None)


def buffered_for(
    model: Any, pk: Any, key_field: str, names: list[str], db: str
) -> list[EventDelivery] | None:
    """The deliveries of the events ``names`` buffered for the record ``pk`` of ``model``,
    oldest first, in one statement: the record's key compared in the database. ``None``
    when the key field is one whose text the database writes otherwise than ``str()``
    (the caller reads the key first then)."""
    field = model._meta.get_field(key_field)
    key_text = _key_text(field, db)
    if key_text is None:
        return None
    compiled_key = (model, key_field, len(names), db)
    built = once(_buffered_sql, compiled_key, field, key_text, len(names), db)
    sql, converters, compiler, attnames = built
    params = [*names, field.model._meta.pk.get_db_prep_value(pk, connections[db])]
    return list(
        read_instances(EventDelivery, (sql, [], compiler, converters, attnames), params, db)
    )


def waiting_question(model: Any, names: dict[str, list[str]], db: str) -> Question | None:
    """Whether deliveries of the events ``names`` (by the key field naming the record) are
    buffered for the row a step change of ``model`` writes: an ``EXISTS`` for its
    ``RETURNING``. ``None`` off PostgreSQL, for a key field on another table than the
    workflow's columns, or one whose text the database writes otherwise than ``str()``."""
    if connections[db].vendor != "postgresql":
        return None
    key = (model, tuple((field, tuple(events)) for field, events in names.items()), db)
    built = once(_waiting_sql, key, model, names, db)
    if built is None:
        return None
    sql, params = built
    return Question(sql, list(params))


def _waiting_sql(model: Any, names: dict[str, list[str]], db: str) -> Along | None:
    quote = connections[db].ops.quote_name
    table = quote(EventDelivery._meta.db_table)
    written = model._meta.get_field(model.workflow.state_attribute).model._meta.db_table
    clauses, params = [], []
    for key_field, events in names.items():
        field = model._meta.get_field(key_field)
        key_text = _key_text(field, db, qualified=True)
        if key_text is None or field.model._meta.db_table != written:
            return None
        marks = ", ".join(["%s"] * len(events))
        clauses.append(
            f"({table}.{quote('event')} IN ({marks}) AND {table}.{quote('key')} = {key_text})"
        )
        params.extend(events)
    # The outcome written out, not bound: the partial index of buffered deliveries
    # serves a prepared statement's generic plan only for a condition it can match.
    return (
        f"EXISTS (SELECT 1 FROM {table} WHERE {table}.{quote('outcome')} = "
        f"'{Outcome.BUFFERED.value}' AND ({' OR '.join(clauses)}))",
        params,
    )


def _key_text(field: Any, db: str, qualified: bool = False) -> str | None:
    """The key column as text the way ``str()`` writes its value: a text or an integer
    field's; else ``None``. ``qualified``: by its table's name."""
    quote = connections[db].ops.quote_name
    column = quote(field.column)
    if qualified:
        column = f"{quote(field.model._meta.db_table)}.{column}"
    if type(field) in _TEXT_FIELDS:
        return column
    if isinstance(field, models.IntegerField):
        return f"CAST({column} AS TEXT)"
    return None


_TEXT_FIELDS = (models.CharField, models.TextField, models.SlugField, models.EmailField)


def _buffered_sql(field: Any, key_text: str, names: int, db: str) -> tuple[Any, ...]:
    quote = connections[db].ops.quote_name
    rows = EventDelivery.objects.db_manager(db).all()
    _, _, compiler, converters, attnames = compiled_select(rows, db)
    table = quote(EventDelivery._meta.db_table)
    columns = ", ".join(
        f"{table}.{quote(EventDelivery._meta.get_field(a).column)}" for a in attnames
    )
    owner = field.model._meta
    marks = ", ".join(["%s"] * names)
    sql = (
        f"SELECT {columns} FROM {table} WHERE {quote('event')} IN ({marks}) "
        f"AND {quote('outcome')} = '{Outcome.BUFFERED.value}' "
        f"AND {quote('key')} = (SELECT {key_text} FROM "
        f"{quote(owner.db_table)} WHERE {quote(owner.pk.column)} = %s) "
        f"ORDER BY {quote('delivered_at')}, {quote(EventDelivery._meta.pk.column)}"
    )
    return sql, converters, compiler, attnames
