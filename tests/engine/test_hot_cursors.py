"""The engine's per-record statements on PostgreSQL are bound on the server, so psycopg
prepares them once a session has run them a few times, unless ``PREPARE_POLLS`` is off
(docs/deployment.md); on either database they skip Django's cursor layers while nothing
looks at statements. Django's query capture and execute wrappers see them either way,
and they raise Django's exceptions."""

import pytest
from django.db import DatabaseError, connections, transaction
from django.db.backends.utils import CursorWrapper
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from django_workflow.engine.sql import cursors
from django_workflow.engine.sql.cursors import hot_cursor
from tests.conftest import workflow_database
from tests.engine.test_round_trips import round_trips
from tests.testapp.models import Expense

pytestmark = pytest.mark.django_db(transaction=True)
on_postgresql = pytest.mark.skipif(
    connections[workflow_database()].vendor != "postgresql",
    reason="prepared statements are PostgreSQL's",
)


def prepared_moves():
    """The session's prepared statements that move an expense and log it."""
    with connections[workflow_database()].cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        statements = [row[0] for row in cursor.fetchall()]
    table = Expense._meta.db_table
    return [sql for sql in statements if f'UPDATE "{table}"' in sql and "transitionlog" in sql]


def fast_track_several(times=8):
    for _ in range(times):
        Expense.objects.create().fast_track()


@on_postgresql
def test_a_move_run_again_and_again_is_prepared_once_per_session():
    fast_track_several()
    assert len(prepared_moves()) == 1
    assert Expense.objects.filter(state="approved").count() == 8


@on_postgresql
def test_with_prepare_polls_off_nothing_of_a_move_is_prepared(settings):
    settings.DJANGO_WORKFLOW = {"PREPARE_POLLS": False}
    fast_track_several()
    assert prepared_moves() == []
    assert Expense.objects.filter(state="approved").count() == 8


def test_query_capture_sees_a_move_and_its_log_row():
    expense = Expense.objects.create()
    with CaptureQueriesContext(connections[workflow_database()]) as seen:
        expense.fast_track()
    table = Expense._meta.db_table
    assert any(f'UPDATE "{table}"' in query["sql"] for query in seen.captured_queries)


@on_postgresql
def test_a_prepared_move_is_one_round_trip_after_its_first():
    """Preparing costs a round trip once per session; then the move is one statement
    (outside a transaction, nothing following it: docs/transitions.md)."""
    first, second = Expense.objects.create(), Expense.objects.create()
    assert round_trips(first.fast_track) == 2  # prepare, the move
    assert round_trips(second.fast_track) == 1


@on_postgresql
def test_after_a_rollback_the_statements_are_prepared_again():
    """psycopg forgets what it prepared when a transaction rolls back; the next runs
    prepare again rather than name a statement the server no longer has."""
    fast_track_several(2)
    with pytest.raises(RuntimeError), transaction.atomic(using=workflow_database()):
        Expense.objects.create().fast_track()
        raise RuntimeError("rolled back")
    fast_track_several(2)
    assert len(prepared_moves()) == 1
    assert Expense.objects.filter(state="approved").count() == 4


def test_an_execute_wrapper_sees_a_move_and_its_log_row():
    connection = connections[workflow_database()]
    seen = []

    def watch(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    expense = Expense.objects.create()
    with connection.execute_wrapper(watch):
        expense.fast_track()
    assert any(f'UPDATE "{Expense._meta.db_table}"' in sql for sql in seen)


def test_a_hot_statement_raises_django_s_errors():
    with pytest.raises(DatabaseError), hot_cursor(workflow_database()) as cursor:
        cursor.execute("SELECT * FROM workflow_no_such_table WHERE id = %s", [1])


def test_a_hot_statement_in_a_transaction_marked_for_rollback_is_refused():
    db = workflow_database()
    with transaction.atomic(using=db):
        transaction.set_rollback(True, using=db)
        with pytest.raises(TransactionManagementError), hot_cursor(db) as cursor:
            cursor.execute("SELECT 1")


@on_postgresql
def test_a_hot_cursor_s_fetch_raises_django_s_errors_and_its_block_closes_it():
    with hot_cursor(workflow_database()) as cursor:
        table = Expense._meta.db_table
        cursor.execute(f'UPDATE "{table}" SET state = state WHERE id = %s', [-1])
        with pytest.raises(DatabaseError):
            cursor.fetchone()  # a statement that returns no rows
        with pytest.raises(DatabaseError):
            cursor.fetchall()
    assert cursor.cursor.closed


def test_a_tool_that_replaced_the_cursor_wrapper_s_execute_sees_a_move(monkeypatch):
    seen = []
    plain = CursorWrapper.execute

    def traced(self, sql, params=None):
        seen.append(sql)
        return plain(self, sql, params)

    monkeypatch.setattr(CursorWrapper, "execute", traced)
    Expense.objects.create().fast_track()
    assert any(f'UPDATE "{Expense._meta.db_table}"' in sql for sql in seen)


def test_with_nothing_looking_a_hot_statement_skips_django_s_cursor_wrapper(settings):
    settings.DEBUG = False
    with hot_cursor(workflow_database()) as cursor:
        assert not isinstance(cursor, CursorWrapper)
        cursor.execute("SELECT %s, '100%%'", [7])
        assert tuple(cursor.fetchone()) == (7, "100%")


def test_a_hot_statement_without_parameters_keeps_its_text_as_written(settings):
    """As Django's cursors do: ``%`` is only an escape when there are parameters."""
    settings.DEBUG = False
    with hot_cursor(workflow_database()) as cursor:
        cursor.execute("SELECT '100%%'")
        assert tuple(cursor.fetchone()) == ("100%%",)


def test_a_hot_statement_takes_named_parameters(settings):
    settings.DEBUG = False
    with hot_cursor(workflow_database()) as cursor:
        cursor.execute("SELECT %(seven)s, '100%%'", {"seven": 7})
        assert tuple(cursor.fetchone()) == (7, "100%")


def test_a_hot_statement_opens_a_closed_connection(settings):
    settings.DEBUG = False
    connections[workflow_database()].close()
    with hot_cursor(workflow_database()) as cursor:
        cursor.execute("SELECT %s", [7])
        assert tuple(cursor.fetchone()) == (7,)


def test_a_tool_that_replaced_the_connection_s_cursor_sees_a_move(monkeypatch, settings):
    settings.DEBUG = False
    connection = connections[workflow_database()]
    seen = []
    plain = connection.cursor

    class Traced:
        """A debug toolbar's cursor: the statements it runs are noted."""

        def __init__(self, cursor):
            self.cursor = cursor

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            self.cursor.close()

        def execute(self, sql, params=None):
            seen.append(sql)
            return self.cursor.execute(sql, params)

        def __getattr__(self, name):
            return getattr(self.cursor, name)

    expense = Expense.objects.create()
    monkeypatch.setattr(connection, "cursor", lambda: Traced(plain()))
    expense.fast_track()
    assert any(f'UPDATE "{Expense._meta.db_table}"' in sql for sql in seen)


def test_the_statements_rewritten_for_sqlite_stay_few(monkeypatch, settings):
    settings.DEBUG = False
    monkeypatch.setattr(cursors, "_QMARKS_KEPT", 2)
    with hot_cursor(workflow_database()) as cursor:
        for number in range(5):
            cursor.execute(f"SELECT %s + {number}", [1])
    assert len(cursors._qmarks) <= 2
