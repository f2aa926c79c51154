"""The cursor of the engine's hot statements: on PostgreSQL one binding its parameters on
the server and preparing each statement once per session; on SQLite the driver's own.

Django's psycopg cursors bind on the client: every call quotes each parameter into the
statement's text, which the server parses and plans again (and Django turns psycopg's
own preparing off, for connection poolers). The engine's statements are compiled once
and run for every record, so that was much of their cost. This cursor, on the same
connection, sends the text and the values apart and has psycopg prepare the statement
on its first run in a session (psycopg keeps the last hundred per connection). While
anything looks at statements (query capture and ``connection.queries``, an execute
wrapper, a tool that replaced the wrapper's ``execute``) it is wrapped like Django's own
cursors, so they see its statements (and a tool that replaced the connection's
``cursor()`` gets its cursor from it); otherwise a lighter cursor keeps the wrapper's
checks without its layers. Off with ``PREPARE_POLLS = False`` (behind a
pooler that cannot keep prepared statements).

On SQLite the driver keeps its own cache of prepared statements; what a statement cost
there was Django's layers: a cursor wrapper made per statement and the ``%s`` placeholders
rewritten by a regular expression on every run. The light cursor runs the driver's cursor
with each statement's rewritten text kept, and lets the worker's turns (``pacing``) see
its writes as Django's cursor would. Other databases get Django's cursor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import connections
from django.db.backends.utils import CursorWrapper

from ...conf import workflow_settings
from ...process.pacing import between_turns


def hot_cursor(db: str) -> Any:
    """A cursor for the engine's compiled statements on ``db`` (use as a context manager)."""
    connection = connections[db]
    if "cursor" in vars(connection):  # a tool (a debug toolbar) replaced it: through it
        return connection.cursor()
    if connection.vendor == "sqlite":
        return _sqlite_cursor(connection)
    if connection.vendor != "postgresql" or not workflow_settings.PREPARE_POLLS:
        return connection.cursor()
    if connection.settings_dict.get("OPTIONS", {}).get("server_side_binding"):
        return connection.cursor()  # prepared as the connection's prepare_threshold says
    if connection.connection is None:  # ensure_connection's own check, without its wrapper
        connection.ensure_connection()
    prepare_when_asked(connection.connection)
    cursor = _preparing_cursor()(connection.connection)
    if _watched(connection):
        with connection.wrap_database_errors:
            # Django's own wrapping (thread check, debug capture, execute wrappers)
            return connection._prepare_cursor(cursor)
    return _QuietCursor(connection, cursor)  # its own thread's: ``connections`` is per thread


def _sqlite_cursor(connection: Any) -> Any:
    """The light cursor on SQLite, or Django's own while anything but the worker's turns
    looks at statements."""
    if _watched(connection, but=between_turns):
        return connection.cursor()
    if connection.connection is None:  # ensure_connection's own check, without its wrapper
        connection.ensure_connection()
    paced = bool(connection.execute_wrappers)  # the worker's turns, and nothing else
    return _QuietSQLiteCursor(connection, connection.connection.cursor(), paced)


def _watched(connection: Any, but: Any = None) -> bool:
    """Whether anything looks at the statements of ``connection``: query capture
    (``DEBUG``, ``CaptureQueriesContext``), an execute wrapper other than ``but``, or a
    tool that replaced the cursor wrapper's ``execute`` (an error tracker, a profiler)."""
    return (
        connection.queries_logged
        or any(wrapper is not but for wrapper in connection.execute_wrappers)
        or _wrapper_patched()
    )


def prepare_when_asked(driver: Any) -> None:
    """Let the psycopg connection ``driver`` prepare the statements asked to
    (``prepare=True``). Django turns psycopg's preparing off; its own cursors bind on the
    client and never prepare, so only those statements are prepared."""
    if driver.prepare_threshold is None:
        driver.prepare_threshold = _ONLY_WHEN_ASKED


def _wrapper_patched() -> bool:
    """Whether a tool (an error tracker, a profiler) replaced Django's cursor wrapper's
    ``execute`` to see every statement: then the hot ones go through it as well."""
    return getattr(CursorWrapper.execute, "__module__", None) != CursorWrapper.__module__


class _QuietCursor:
    """What Django's cursor wrapper does when nobody captures queries or wraps their
    execution: refuse a statement in a transaction marked for rollback, and raise
    Django's exceptions for the driver's. Its layers cost a record more than its own
    Python on the worker's hot path."""

    __slots__ = ("connection", "cursor")

    def __init__(self, connection: Any, cursor: Any) -> None:
        self.connection, self.cursor = connection, cursor

    def __enter__(self) -> _QuietCursor:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.cursor.close()

    def execute(self, sql: str, params: Any = None) -> Any:
        self.connection.validate_no_broken_transaction()
        with self.connection.wrap_database_errors:
            return self.cursor.execute(sql, params)

    def fetchone(self) -> Any:
        with self.connection.wrap_database_errors:
            return self.cursor.fetchone()

    def fetchall(self) -> Any:
        with self.connection.wrap_database_errors:
            return self.cursor.fetchall()

    @property
    def rowcount(self) -> int:
        return int(self.cursor.rowcount)


class _QuietSQLiteCursor(_QuietCursor):
    """``_QuietCursor`` on the sqlite3 module's cursor: Django's placeholders rewritten to
    the driver's once per statement, and a write outside a transaction taken in one of the
    worker's turns when the worker paces writes (``pacing.pace_every_write``)."""

    __slots__ = ("paced",)

    def __init__(self, connection: Any, cursor: Any, paced: bool) -> None:
        super().__init__(connection, cursor)
        self.paced = paced

    def execute(self, sql: str, params: Any = None) -> Any:
        self.connection.validate_no_broken_transaction()
        if isinstance(params, Mapping):  # named: rewritten with the names, as Django does
            sql = _rewritten(sql, self.connection, list(params))
        elif params is not None:
            sql = _qmarks.get(sql) or _qmark(sql, self.connection)
        if self.paced:
            context = {"connection": self.connection, "cursor": self}
            return between_turns(self._run, sql, params, False, context)
        return self._run(sql, params)

    def _run(self, sql: str, params: Any, *unused: Any) -> Any:
        with self.connection.wrap_database_errors:
            if params is None:
                return self.cursor.execute(sql)
            return self.cursor.execute(sql, params)


#: Statements in Django's placeholders, in the sqlite3 module's.
_qmarks: dict[str, str] = {}
#: More than the engine's compiled statements ever are: a caller building its text per
#: call would otherwise grow ``_qmarks`` without end.
_QMARKS_KEPT = 1000


def _qmark(sql: str, connection: Any) -> str:
    """``sql`` as Django's own SQLite cursor rewrites it for the driver, kept."""
    if len(_qmarks) >= _QMARKS_KEPT:
        _qmarks.clear()
    _qmarks[sql] = rewritten = _rewritten(sql, connection)
    return rewritten


def _rewritten(sql: str, connection: Any, names: list[str] | None = None) -> str:
    """``sql`` in the driver's placeholders, by the rewriting of Django's own SQLite cursor
    (a method of its cursor)."""
    django_cursor = connection.create_cursor()
    try:
        return str(django_cursor.convert_query(sql, param_names=names))
    finally:
        django_cursor.close()


def _preparing_cursor() -> Any:
    import psycopg

    global _PreparingCursor
    if _PreparingCursor is None:

        class PreparingCursor(psycopg.Cursor):  # type: ignore[type-arg]
            """Server-side binding, every statement prepared on its first run."""

            def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
                options.setdefault("prepare", True)
                return super().execute(query, params, **options)

            def _send_query_prepared(self, name: bytes, pgq: Any, **options: Any) -> None:
                self._query = pgq  # what Django's query capture reads back
                super()._send_query_prepared(name, pgq, **options)

        _PreparingCursor = PreparingCursor
    return _PreparingCursor


_PreparingCursor: Any = None
_ONLY_WHEN_ASKED = 2**31 - 1
