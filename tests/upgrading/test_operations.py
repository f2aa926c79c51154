"""Migration operations that repair records in a step the declaration no longer has.

The operations run through Django's migration machinery on the historical
models of a state built from the test app, without migration files.
"""

from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.db import connection, connections
from django.db.migrations import Migration
from django.db.migrations.exceptions import IrreversibleError
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.state import ProjectState
from django.db.migrations.writer import MigrationWriter
from django.test import override_settings
from django.utils import timezone

from django_workflow import operations
from django_workflow.models import PendingEffect, TransitionLog
from django_workflow.operations import MoveRecords, OweUnranEffects, RenameStep
from django_workflow.testing import run_due_work
from tests.testapp.models import Batch, Candidate, CandidateProxy, Order, Routed, Shipment, Ticket

# The schema editor cannot run inside the test's transaction on SQLite.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def states():
    """The migration states before and after an operation: the test app's models as they are."""
    before = ProjectState.from_apps(apps)
    return before, before.clone()


def forwards(operation, states, app_label="testapp"):
    before, after = states
    operation.state_forwards(app_label, after)
    with connection.schema_editor() as editor:
        operation.database_forwards(app_label, editor, before, after)


def backwards(operation, states, app_label="testapp"):
    before, after = states
    with connection.schema_editor() as editor:
        operation.database_backwards(app_label, editor, after, before)


def strand(record, step="gone"):
    """Put a record into a step its declaration does not have, as a removed step leaves it."""
    state = type(record).workflow.state_attribute
    type(record).objects.filter(pk=record.pk).update(**{state: step})
    record.refresh_from_db()
    return record


def step_of(record):
    record.refresh_from_db()
    return record.current_step


def migration_rows():
    return TransitionLog.objects.filter(triggered_by=TransitionLog.Trigger.MIGRATION)


# RenameStep -------------------------------------------------------------------


def test_rename_step_puts_the_records_of_the_old_step_into_the_new_one(states):
    stranded = [strand(Ticket.objects.create(), "open") for _ in range(2)]
    forwards(RenameStep("testapp.Ticket", "open", "new"), states)
    assert [step_of(ticket) for ticket in stranded] == ["new", "new"]


def test_rename_step_writes_no_log_rows_and_keeps_the_ones_written(states):
    record = Routed.objects.create()
    forwards(RenameStep("testapp.Routed", "open", "pending"), states)
    assert step_of(record) == "pending"
    [initial] = record.history()
    assert (initial.triggered_by, initial.from_state, initial.to_state) == ("initial", "", "open")


def test_rename_step_keeps_the_instant_the_record_entered_its_step(states):
    ticket = strand(Ticket.objects.create(), "open")
    entered = ticket.state_entered_at
    forwards(RenameStep("testapp.Ticket", "open", "new"), states)
    ticket.refresh_from_db()
    assert ticket.state_entered_at == entered


def test_rename_step_leaves_records_in_other_steps_alone(states):
    kept = strand(Ticket.objects.create(), "closed")
    forwards(RenameStep("testapp.Ticket", "open", "new"), states)
    assert step_of(kept) == "closed"


def test_rename_step_reverses_by_renaming_back(states):
    ticket = strand(Ticket.objects.create(), "open")
    operation = RenameStep("testapp.Ticket", "open", "new")
    forwards(operation, states)
    backwards(operation, states)
    assert step_of(ticket) == "open"


def test_rename_step_writes_the_column_named_by_state_attribute(states):
    order = strand(Order.objects.create(), "basket")
    forwards(RenameStep("testapp.Order", "basket", "draft", state_attribute="status"), states)
    assert step_of(order) == "draft"


def test_a_model_named_without_its_app_label_is_looked_up_in_the_migrations_app(states):
    ticket = strand(Ticket.objects.create(), "open")
    forwards(RenameStep("Ticket", "open", "new"), states, app_label="testapp")
    assert step_of(ticket) == "new"


def test_a_state_attribute_the_model_lacks_is_an_error_that_names_the_fix(states):
    with pytest.raises(ValueError, match=r"testapp\.Order has no field 'state'.*state_attribute"):
        forwards(RenameStep("testapp.Order", "basket", "draft"), states)


def test_an_unknown_model_is_an_error_that_names_the_fix(states):
    with pytest.raises(ValueError, match=r"no model 'testapp\.Nothing'.*app_label\.ModelName"):
        forwards(RenameStep("testapp.Nothing", "old", "new"), states)


def test_the_same_step_twice_is_rejected_when_the_operation_is_written():
    with pytest.raises(ValueError, match="both 'open'"):
        RenameStep("testapp.Ticket", "open", "open")
    with pytest.raises(ValueError, match="both 'open'"):
        MoveRecords("testapp.Ticket", "open", "open")


# MoveRecords ------------------------------------------------------------------


def test_move_records_puts_the_records_of_a_step_into_another(states):
    stranded = [strand(Ticket.objects.create(), "gone") for _ in range(3)]
    other = Ticket.objects.create()
    forwards(MoveRecords("testapp.Ticket", "gone", "closed"), states)
    assert [step_of(ticket) for ticket in stranded] == ["closed"] * 3
    assert step_of(other) == "new"


def test_moved_records_enter_their_new_step_now(states):
    ticket = strand(Ticket.objects.create(), "gone")
    Ticket.objects.filter(pk=ticket.pk).update(state_entered_at=timezone.now() - timedelta(days=30))
    before = timezone.now()
    forwards(MoveRecords("testapp.Ticket", "gone", "working"), states)
    ticket.refresh_from_db()
    assert ticket.state_entered_at >= before


def test_moved_records_owe_the_on_enter_of_their_new_step_and_the_worker_runs_it(states):
    shipments = [strand(Shipment.objects.create()) for _ in range(2)]  # labels printed
    forwards(MoveRecords("testapp.Shipment", "gone", "packing"), states)
    assert PendingEffect.objects.filter(step="packing").count() == 2
    run_due_work()
    assert [Shipment.objects.get(pk=s.pk).labels_printed for s in shipments] == [2, 2]


def test_move_records_into_a_step_with_on_enter_needs_the_table_of_effects(states):
    strand(Shipment.objects.create())
    before, after = (state.clone() for state in states)
    for state in (before, after):
        state.remove_model("django_workflow", "pendingeffect")
    with pytest.raises(ValueError, match="0010_pending_effects"):
        forwards(MoveRecords("testapp.Shipment", "gone", "packing"), (before, after))


def test_move_records_with_nothing_to_move_needs_neither_the_log_nor_the_effects(states):
    """A fresh database (a project's test database) runs a release-2 migration that
    depends on neither table's newer migration: nothing to move, nothing asked."""
    before, after = (state.clone() for state in states)
    for state in (before, after):
        state.remove_model("django_workflow", "pendingeffect")
        state.remove_model("django_workflow", "workflowoverview")
        state.remove_model("django_workflow", "transitionlog")
    forwards(MoveRecords("testapp.Shipment", "gone", "packing"), (before, after))
    assert not PendingEffect.objects.exists()


def test_rename_step_carries_the_effects_owed_to_entries_of_the_old_name(states):
    """Entries made under the old name (a worker of the new code already running) still
    owe their on_enter; the poll looks for them under the new name."""
    shipment = strand(Shipment.objects.create(), "boxing")  # its creation's labels printed
    PendingEffect.objects.create(  # an entry into "boxing", made by the old code
        content_type=ContentType.objects.get_for_model(Shipment),
        object_id=str(shipment.pk),
        step="boxing",
        entered_at=shipment.state_entered_at,
        due_at=shipment.state_entered_at,
    )
    forwards(RenameStep("testapp.Shipment", "boxing", "packing"), states)
    assert list(PendingEffect.objects.values_list("step", flat=True)) == ["packing"]
    run_due_work()
    assert Shipment.objects.get(pk=shipment.pk).labels_printed == 2
    assert not PendingEffect.objects.exists()


def test_move_records_logs_one_migration_row_per_moved_record(states):
    candidates = [strand(Candidate.objects.create(name=f"c{i}")) for i in range(3)]
    forwards(MoveRecords("testapp.Candidate", "gone", "interview"), states)
    rows = list(migration_rows())
    assert len(rows) == 3
    assert {row.object_id for row in rows} == {str(c.pk) for c in candidates}
    assert {(row.from_state, row.to_state, row.transition_name) for row in rows} == {
        ("gone", "interview", "")
    }
    assert {row.content_type for row in rows} == {ContentType.objects.get_for_model(Candidate)}


def test_the_migration_row_names_when_the_record_had_entered_the_step_it_left(states):
    candidate = strand(Candidate.objects.create(name="ada"))
    entered = timezone.now() - timedelta(days=3)
    Candidate.objects.filter(pk=candidate.pk).update(state_entered_at=entered)
    forwards(MoveRecords("testapp.Candidate", "gone", "interview"), states)
    assert migration_rows().get().from_state_entered_at == entered


def test_the_migration_row_is_the_last_entry_of_the_records_history(states):
    candidate = strand(Candidate.objects.create(name="ada"))
    forwards(MoveRecords("testapp.Candidate", "gone", "interview"), states)
    last = candidate.history().last()
    assert (last.triggered_by, last.from_state, last.to_state) == ("migration", "gone", "interview")
    assert last.record == candidate
    assert last.actor is None


def test_move_records_logs_a_uuid_key_as_text_that_resolves(states):
    order = strand(Order.objects.create())
    forwards(MoveRecords("testapp.Order", "gone", "draft", state_attribute="status"), states)
    assert step_of(order) == "draft"
    [row] = migration_rows()
    assert row.object_id == str(order.pk)
    assert row.record == order


def test_records_moved_through_a_proxy_are_logged_against_the_concrete_model(states):
    candidate = strand(Candidate.objects.create(name="ada"))
    forwards(MoveRecords("testapp.CandidateProxy", "gone", "offer"), states)
    assert step_of(candidate) == "offer"
    [row] = migration_rows()
    assert row.content_type == ContentType.objects.get_for_model(Candidate)
    assert list(CandidateProxy.objects.get(pk=candidate.pk).history()) == list(candidate.history())


def test_moving_into_a_step_clears_its_action_timeouts_fired_columns(states):
    batch = strand(Batch.objects.create())
    Batch.objects.filter(pk=batch.pk).update(waiting_ping_fired_at=timezone.now())
    forwards(MoveRecords("testapp.Batch", "gone", "waiting"), states)
    batch.refresh_from_db()
    assert (batch.state, batch.waiting_ping_fired_at) == ("waiting", None)


def test_move_records_with_log_false_writes_no_rows(states):
    candidate = strand(Candidate.objects.create(name="ada"))
    forwards(MoveRecords("testapp.Candidate", "gone", "offer", log=False), states)
    assert step_of(candidate) == "offer"
    assert not migration_rows().exists()


def test_move_records_moves_more_records_than_one_batch(states, monkeypatch):
    monkeypatch.setattr(operations, "CHUNK_SIZE", 2)
    tickets = [strand(Ticket.objects.create()) for _ in range(5)]
    forwards(MoveRecords("testapp.Ticket", "gone", "closed"), states)
    assert [step_of(ticket) for ticket in tickets] == ["closed"] * 5
    assert migration_rows().count() == 5


def test_move_records_without_the_log_in_the_state_names_the_dependency_to_add(states):
    before = ProjectState.from_apps(apps)
    before.remove_model("django_workflow", "workflowoverview")  # a proxy of the log
    before.remove_model("django_workflow", "transitionlog")
    ticket = strand(Ticket.objects.create())
    with pytest.raises(ValueError, match="0003_attempts_survive_interruptions"):
        forwards(MoveRecords("testapp.Ticket", "gone", "closed"), (before, before.clone()))
    assert step_of(ticket) == "gone"


class NoTestApp:
    def allow_migrate(self, db, app_label, **hints):
        return app_label != "testapp"


@override_settings(DATABASE_ROUTERS=[f"{__name__}.NoTestApp"])
def test_the_operations_leave_a_database_the_router_keeps_the_model_off(states):
    ticket = strand(Ticket.objects.create())
    forwards(RenameStep("testapp.Ticket", "gone", "new"), states)
    forwards(MoveRecords("testapp.Ticket", "gone", "closed"), states)
    assert step_of(ticket) == "gone"
    assert not migration_rows().exists()


# Through a migration ----------------------------------------------------------


def repair_migration(*repairs):
    migration = Migration("0099_repair", "testapp")
    migration.dependencies = [operations.LOG_MIGRATION]
    migration.operations = list(repairs)
    return migration


def test_a_migration_applies_both_operations_in_order():
    ticket = strand(Ticket.objects.create(), "open")
    left = strand(Ticket.objects.create(), "gone")
    migration = repair_migration(
        RenameStep("Ticket", "open", "new"), MoveRecords("Ticket", "gone", "closed")
    )
    with connection.schema_editor(atomic=migration.atomic) as editor:
        migration.apply(ProjectState.from_apps(apps), editor)
    assert (step_of(ticket), step_of(left)) == ("new", "closed")
    assert migration_rows().count() == 1


def test_a_migration_with_move_records_cannot_be_unapplied():
    migration = repair_migration(MoveRecords("Ticket", "gone", "closed"))
    with (
        pytest.raises(IrreversibleError),
        connection.schema_editor(atomic=migration.atomic) as editor,
    ):
        migration.unapply(ProjectState.from_apps(apps), editor)


# Written into migration files -------------------------------------------------


@pytest.mark.parametrize(
    "operation",
    [
        RenameStep("testapp.Ticket", "open", "new"),
        RenameStep("Order", "basket", "draft", state_attribute="status"),
        MoveRecords("testapp.Candidate", "gone", "interview"),
        MoveRecords("Order", "gone", "draft", state_attribute="status", log=False),
    ],
    ids=["rename", "rename-status", "move", "move-status-no-log"],
)
def test_an_operation_written_into_a_migration_reads_back_the_same(operation):
    text, imports = MigrationWriter.serialize(operation)
    namespace = {}
    exec("\n".join(sorted(imports)), namespace)
    restored = eval(text, namespace)
    assert type(restored) is type(operation)
    assert restored.deconstruct() == operation.deconstruct()
    assert "django_workflow.operations." in text


def test_the_operations_describe_themselves_for_migrate_and_makemigrations():
    rename = RenameStep("testapp.Ticket", "open", "new")
    move = MoveRecords("testapp.Ticket", "gone", "closed")
    assert rename.describe() == "Rename step 'open' to 'new' in the rows of testapp.Ticket"
    assert move.describe() == "Move the testapp.Ticket records in step 'gone' to 'closed'"
    assert rename.migration_name_fragment == "rename_step_ticket_open_new"
    assert move.migration_name_fragment == "move_ticket_gone_to_closed"
    assert (rename.reversible, move.reversible) == (True, False)
    assert not rename.reduces_to_sql and not move.reduces_to_sql


# OweUnranEffects --------------------------------------------------------------

BEFORE_EFFECTS = [("testapp", "0022_render"), ("django_workflow", "0010_pending_effects")]


@pytest.fixture
def fired_columns():
    """The test app migrated back to the release whose Shipment had a fired column."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_EFFECTS)
    yield MigrationExecutor(connection).loader.project_state(BEFORE_EFFECTS)
    connections.close_all()
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_owe_unran_effects_carries_over_what_the_fired_column_had_not_run(fired_columns):
    old = fired_columns.apps.get_model("testapp", "Shipment")
    now = timezone.now()
    _ran, unran, _left = (
        old.objects.create(state="packing", state_entered_at=now, packing_on_enter_fired_at=now),
        old.objects.create(state="packing", state_entered_at=now),
        old.objects.create(state="shipped", state_entered_at=now),
    )
    forwards(OweUnranEffects("testapp.Shipment", "packing"), (fired_columns, fired_columns.clone()))
    owed = PendingEffect.objects.values_list("object_id", "step", "entered_at")
    assert list(owed) == [(str(unran.pk), "packing", now)]  # neither the ran nor the left one


def test_owe_unran_effects_without_the_fired_column_says_where_it_goes(states):
    with pytest.raises(ValueError, match="before the RemoveField"):
        forwards(OweUnranEffects("testapp.Shipment", "packing"), states)
