"""Automatic steps and creation: docs/declaring.md, docs/worker.md (the execution path)."""

import pytest
from django.test import override_settings
from django_q.models import OrmQ, Success

from django_workflow.engine import run_step
from django_workflow.models import TransitionLog
from tests.testapp.models import Candidate, Import, Order

pytestmark = pytest.mark.django_db


def row(record):
    return type(record).objects.get(pk=record.pk)


def test_a_record_created_in_an_automatic_step_runs_it_after_commit(committed):
    with committed():
        candidate = Candidate.objects.create(resume_words=700)
        assert row(candidate).state == "screening"  # nothing runs before commit
    stored = row(candidate)
    assert (stored.state, stored.score, stored.screening_runs) == ("interview", 7, 1)


def test_on_success_routes_see_the_record_as_the_action_left_it(committed):
    with committed():
        low = Candidate.objects.create(resume_words=100)
    assert (row(low).state, row(low).score) == ("rejected", 1)


def test_an_exception_takes_on_error_and_rolls_the_action_back(committed):
    order = Order.objects.create(fail_at="charge")
    with committed():
        order.place()
    stored = row(order)
    assert (stored.status, stored.visited) == ("payment_failed", "")
    error_row = TransitionLog.objects.get(object_id=str(order.pk), triggered_by="error_path")
    assert (error_row.from_state, error_row.to_state) == ("charge", "payment_failed")
    assert (error_row.error, error_row.attempt) == ("RuntimeError: charge failed", 1)


def test_entering_the_error_step_resets_state_entered_at(committed):
    order = Order.objects.create(fail_at="charge")
    with committed():
        order.place()
    assert row(order).state_entered_at > order.state_entered_at


def test_a_chain_of_automatic_steps_runs_to_the_end(committed):
    order = Order.objects.create()
    with committed():
        order.place()
    stored = row(order)
    assert (stored.status, stored.visited) == ("shipped", "charge,reserve,pack,ship,")
    triggers = list(
        TransitionLog.objects.filter(object_id=str(order.pk)).values_list(
            "triggered_by", "from_state", "to_state"
        )
    )
    assert triggers == [
        ("initial", "", "draft"),
        ("manual", "draft", "charge"),
        ("automatic", "charge", "reserve"),
        ("automatic", "reserve", "pack"),
        ("automatic", "pack", "ship"),
        ("automatic", "ship", "shipped"),
    ]


def test_a_failure_in_the_middle_of_a_chain_keeps_what_came_before(committed):
    order = Order.objects.create(fail_at="pack")
    with committed():
        order.place()
    stored = row(order)
    assert (stored.status, stored.visited) == ("out_of_stock", "charge,reserve,")


def test_a_recovery_transition_loops_back_into_the_chain(committed):
    order = Order.objects.create(fail_at="pack")
    with committed():
        order.place()
    Order.objects.filter(pk=order.pk).update(fail_at="")
    order.refresh_from_db()
    with committed():
        order.restock()
    assert (row(order).status, row(order).visited) == (
        "shipped",
        "charge,reserve,reserve,pack,ship,",
    )


def test_a_step_without_on_error_stays_put_when_its_action_fails(db):
    record = Import.objects.create(rows=-1)
    assert run_step(Import, record.pk, "parse") is None
    assert (row(record).state, row(record).rows) == ("parse", -1)


def test_run_step_ignores_a_record_that_already_moved_on(committed):
    order = Order.objects.create()
    assert run_step(Order, order.pk, "charge") is None
    assert row(order).visited == ""


def test_run_step_returns_the_step_it_moved_to(db):
    record = Import.objects.create()  # no commit captured: the step waits
    assert run_step(Import, record.pk, "parse") == "done"
    assert (row(record).state, row(record).rows) == ("done", 42)


@pytest.mark.parametrize("path", ["create", "save", "bulk_create"])
def test_every_create_path_starts_in_the_initial_step(path, committed):
    with committed():
        if path == "create":
            record = Order.objects.create(status="shipped")
        elif path == "save":
            record = Order(status="shipped")
            record.save()
        else:
            [record] = Order.objects.bulk_create([Order(status="shipped")])
    stored = row(record)
    assert stored.status == "draft"
    assert stored.state_entered_at is not None
    initial = TransitionLog.objects.get(object_id=str(record.pk))
    assert (initial.triggered_by, initial.to_state) == ("initial", "draft")


def test_bulk_created_records_run_an_automatic_initial_step(committed):
    with committed():
        records = Import.objects.bulk_create([Import(), Import()])
    assert [row(r).state for r in records] == ["done", "done"]


def test_an_update_that_is_not_a_creation_writes_no_initial_row(db):
    order = Order.objects.create()
    order.save()
    assert TransitionLog.objects.filter(object_id=str(order.pk)).count() == 1


def test_automatic_steps_go_through_the_django_q2_queue(committed):
    with committed():
        Import.objects.create()
    [task] = Success.objects.all()
    assert task.func == "django_workflow.worker.transport.run_automatic_steps"
    assert task.args == ["testapp.Import", "parse"] or task.args == ("testapp.Import", "parse")
    assert task.result == 1  # one run of the step moved the record on


def test_without_enqueue_automatic_steps_an_entry_queues_nothing(committed):
    with override_settings(DJANGO_WORKFLOW={"ENQUEUE_AUTOMATIC_STEPS": False}), committed():
        record = Import.objects.create()
    assert row(record).state == "parse"
    assert not OrmQ.objects.exists() and not Success.objects.exists()
    assert run_step(Import, record.pk, "parse") == "done"  # the project runs it itself
