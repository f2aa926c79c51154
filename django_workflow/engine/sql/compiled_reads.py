"""Reading model instances through a queryset's SQL compiled once: the statement as Django
writes it, run again with new parameters, its rows turned into instances the way the
ORM would (converters, ``from_db``). The engine's hot reads use it."""

from __future__ import annotations

from typing import Any

from .cursors import hot_cursor


def compiled_select(rows: Any, db: str) -> tuple[Any, ...]:
    """A queryset's SQL with its parameters, its compiler, the converters its columns need
    and the names ``from_db`` takes them by."""
    compiler = rows.query.get_compiler(using=db)
    sql, params = compiler.as_sql()
    selected = [column for column, _, _ in compiler.select]
    converters = compiler.get_converters(selected)
    names = [selected[index].target.attname for index in compiler.klass_info["select_fields"]]
    return sql, list(params), compiler, converters, names


def read_instances(model: Any, compiled: tuple[Any, ...], params: list[Any], db: str) -> list[Any]:
    """The instances of ``model`` the compiled statement reads with ``params``."""
    sql, _, compiler, converters, names = compiled
    with hot_cursor(db) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if converters:
        rows = list(compiler.apply_converters(rows, converters))
    return [model.from_db(db, names, tuple(row[: len(names)])) for row in rows]
