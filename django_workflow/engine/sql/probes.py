"""The hot queries, compiled once: "is a deadline due?", "has an automatic step
waiting records?", and locking one record by its key.

``any_due`` asks the ``next_due_at`` index one question per model. It is
compiled once per model and, on PostgreSQL, prepared once per session
(``cursors``), so the server plans it once rather than every tick
(``PREPARE_POLLS``; turn it off behind a pooler that does not keep sessions,
such as PgBouncer in transaction mode).

``due`` asks, for automatic steps (and ``self_scheduled`` deadlines), one
scalar subquery per work in one ``SELECT``. Every instant in a Work's
``match`` is ``now`` minus a constant, so the SQL compiled for one ``now``
serves every other once its datetime parameters are shifted. It is not
prepared: each query is planned with the step it names.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import connections
from django.db.models import Subquery
from django.db.models.sql import Query

from ...model.columns import NEXT_DUE_AT
from ...work import Work
from .compiled_reads import compiled_select, read_instances
from .cursors import hot_cursor
from .once import once

_SENTINEL = datetime(2000, 1, 1, tzinfo=UTC)


def matching(model: Any, work: Work, now: datetime, db: str) -> Any:
    """The records ``work`` selects at ``now`` (automatic steps, self-scheduled deadlines).

    Unordered: an ``ORDER BY pk`` let PostgreSQL walk the whole key index
    looking for a step's rows instead of reading the step's index.
    """
    return model.workflow.queryset(db).filter(work.match(now)).order_by()


def locked(model: Any, pk: Any, db: str) -> Any:
    """The record ``pk`` locked for the caller's transaction; ``None`` when another
    transaction holds it (PostgreSQL) or it is gone.

    One plain cursor and one ``Model.from_db``: the SQL, the columns it returns and
    their converters are compiled once per model (a ``RawQuerySet`` compiled them again
    for every record), the statement prepared once per session like the polls.
    """
    compiled = once(_lock_select, (model, db), model, db)
    pk_field = model._meta.pk
    value = pk_field.get_db_prep_value(pk_field.to_python(pk), connections[db])
    return next(iter(read_instances(model, compiled, [value], db)), None)


def _lock_select(model: Any, db: str) -> tuple[Any, ...]:
    """``SELECT`` every column of one record ``FOR UPDATE SKIP LOCKED``."""
    rows = model._base_manager.db_manager(db).select_for_update(skip_locked=True)
    return compiled_select(rows.filter(pk=0), db)


def _compiled_for(rows: Any, db: str) -> str:
    """The SQL of ``rows`` for the database ``db`` (``Query.sql_with_params`` compiles for
    ``default``, whose backend may lack ``FOR UPDATE SKIP LOCKED``, or refuse it outside
    of its own transaction)."""
    sql, _params = rows.query.get_compiler(using=db).as_sql()
    return sql


def any_due(model: Any, now: datetime, db: str) -> bool:
    """Whether a deadline of ``model`` is due at ``now``: one lookup in the ``next_due_at``
    index, whatever the number and kinds of deadlines. The SQL is compiled once per model."""
    value = connections[db].ops.adapt_datetimefield_value(now)
    with hot_cursor(db) as cursor:
        cursor.execute(once(_any_due_sql, (model, db), model, db), [value])
        return cursor.fetchone() is not None


def _any_due_sql(model: Any, db: str) -> str:
    rows = model._base_manager.db_manager(db).filter(**{f"{NEXT_DUE_AT}__lte": _SENTINEL})
    # Ordered by the index's column: once PostgreSQL plans the prepared statement
    # generically, an unordered LIMIT 1 became a full scan of the table.
    return _compiled_for(rows.order_by(NEXT_DUE_AT).values("pk")[:1], db)


def due(model: Any, works: list[Work], now: datetime, db: str) -> list[Work]:
    """The works in ``works`` with at least one record matching at ``now``."""
    if not works:
        return []
    sql, params = _sql(model, works, now, db)
    with connections[db].cursor() as cursor:
        # Not prepared: a generic plan cannot know which step is asked for, and read
        # the whole table to find out (the step's own index serves each planned query).
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return [work for work, first in zip(works, row, strict=True) if first is not None]


def _sql(model: Any, works: list[Work], now: datetime, db: str) -> tuple[str, list[Any]]:
    if not _reusable(model, works, db):
        return _compile(model, works, now, db)
    key = (model, tuple(work.name for work in works), db)
    sql, params = once(_compile, key, model, works, _SENTINEL, db)
    shift = now - _SENTINEL
    return sql, [p + shift if isinstance(p, datetime) else p for p in params]


def _reusable(model: Any, works: list[Work], db: str) -> bool:
    calculations = model.workflow.calculations
    if any(w.deadline is not None and w.deadline.field in calculations for w in works):
        return False
    return connections[db].ops.adapt_datetimefield_value(_SENTINEL) is _SENTINEL


def _compile(model: Any, works: list[Work], now: datetime, db: str) -> tuple[str, list[Any]]:
    query = Query(None)
    for index, work in enumerate(works):
        first = matching(model, work, now, db).values("pk")[:1]
        query.add_annotation(Subquery(first), f"work_{index}")
    sql, params = query.get_compiler(using=db).as_sql()
    return sql, list(params)
