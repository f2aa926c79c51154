"""What the hot paths cost on PostgreSQL, in round trips to the server: the writes after
the decision (the step or fired columns and the log row) travel together
(docs/decisions.md, "Throughput")."""

import tempfile
from datetime import timedelta

import psycopg
import pytest
from django.db import connections, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from django_workflow import StaleRecord
from django_workflow.engine import fire, run_step
from django_workflow.models import PendingEffect, TransitionLog, WorkAttempt
from tests.conftest import workflow_database
from tests.moments import T
from tests.testapp.models import Batch, Expense, Order, Routed, Shipment, SideEffect

pytestmark = pytest.mark.django_db(transaction=True)  # a transaction of its own, as in production
counted = pytest.mark.skipif(
    connections[workflow_database()].vendor != "postgresql",
    reason="round trips are counted with libpq's trace",
)


def round_trips(run):
    """How many times ``run()`` waited for the server (one ReadyForQuery each)."""
    connection = connections[workflow_database()]
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS | psycopg.pq.Trace.REGRESS_MODE)
        try:
            run()
        finally:
            pgconn.untrace()
        trace.seek(0)
        messages = [line.split("\t") for line in trace]
    return sum(1 for m in messages if m[0] == "B" and m[2].startswith("ReadyForQuery"))


@counted
def test_a_manual_transition_outside_a_transaction_is_its_update_with_its_log_row_alone():
    Expense.objects.create().fast_track()  # the session prepares the statement on its first run
    expense = Expense.objects.create()
    assert round_trips(expense.fast_track) == 1  # no BEGIN, no COMMIT (docs/transitions.md)
    assert Expense.objects.get(pk=expense.pk).state == "approved"
    assert expense.history().last().to_state == "approved"


@counted
def test_inside_a_transaction_the_move_is_the_caller_s_and_rolls_back_with_it():
    expense = Expense.objects.create()
    logged = TransitionLog.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic(using=workflow_database()):
        expense.fast_track()
        raise RuntimeError("the caller's own work failed")
    assert Expense.objects.get(pk=expense.pk).state == "submitted"
    assert TransitionLog.objects.count() == logged


@counted
def test_a_move_that_owes_an_effect_keeps_its_transaction_and_commits_both():
    shipment = Shipment.objects.create(printer_offline=True)  # its effect fails: stays owed
    PendingEffect.objects.all().delete()
    assert round_trips(shipment.repack) > 1  # BEGIN, the write, the owed effect, COMMIT
    assert PendingEffect.objects.filter(object_id=str(shipment.pk), step="packing").exists()


def test_a_stale_manual_transition_writes_no_log_row():
    record = Routed.objects.create()
    Routed.objects.filter(pk=record.pk).update(state="declined")
    with pytest.raises(StaleRecord):
        record.decide(decision="approve")
    assert Routed.objects.get(pk=record.pk).state == "declined"
    assert [row.to_state for row in record.history()] == ["open"]


@counted
def test_a_fired_deadline_sends_its_fired_column_with_its_log_row(clock):
    first, second = Batch.objects.create(), Batch.objects.create()
    clock.move_to(T + timedelta(days=1, minutes=1))
    work, now = Batch.workflow.work("timeout:waiting.ping"), T + timedelta(days=1)
    db = workflow_database()
    assert fire(Batch, first.pk, work, now, db, None)  # the lock's statement is prepared
    # BEGIN, the lock, the action's own INSERT, the fired column with the log row, COMMIT
    assert round_trips(lambda: fire(Batch, second.pk, work, now, db, None)) == 5
    assert SideEffect.objects.filter(batch=second).count() == 1
    fired = Batch.objects.get(pk=second.pk)
    assert fired.waiting_ping_fired_at == now
    assert fired.history().filter(transition_name="ping").count() == 1


@counted
def test_a_manual_transition_sends_its_update_and_log_row_as_one_statement():
    expense = Expense.objects.create()
    log, table = TransitionLog._meta.db_table, Expense._meta.db_table
    with CaptureQueriesContext(connections[workflow_database()]) as seen:
        expense.fast_track()
    writes = [q["sql"] for q in seen.captured_queries if log in q["sql"] or table in q["sql"]]
    assert len(writes) == 1  # no second statement, so no pipeline to enter and sync
    assert f'INSERT INTO "{log}"' in writes[0] and f'UPDATE "{table}"' in writes[0]
    assert expense.history().last().to_state == "approved"


@counted
@override_settings(DJANGO_WORKFLOW={"ENQUEUE_AUTOMATIC_STEPS": False})  # runs only when asked
def test_an_automatic_step_marks_its_attempt_prepared_and_forgets_it_with_its_move():
    first, second = Order.objects.create(), Order.objects.create()
    first.place(), second.place()
    assert run_step(Order, first.pk, "charge") == "reserve"  # its statements are prepared
    # the entry's read, the attempt marked running (committed), BEGIN, the lock,
    # the move with its log row and the attempt's DELETE, COMMIT
    assert round_trips(lambda: run_step(Order, second.pk, "charge")) == 6
    assert Order.objects.get(pk=second.pk).status == "reserve"
    assert not WorkAttempt.objects.filter(object_id=str(second.pk)).exists()
    assert second.history().last().to_state == "reserve"
    with connections[workflow_database()].cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    marking = f'INSERT INTO "{WorkAttempt._meta.db_table}"'
    assert any(sql.startswith(marking) for sql in prepared)  # bound on the server, prepared
