"""Every way a record changes goes through one engine path (docs/decisions.md).

For each path — creation, manual, automatic, error, transition timeout,
action timeout, every, undo — the log row, the ``step_changed`` signal (with
the instance already in its new step), the re-arming of action timeouts and
the queueing of what follows. Tasks go to django-q2's ORM broker here, so a
queued automatic step is seen queued, not run inline.
"""

from datetime import timedelta

import pytest
from django.db import connections, router, transaction
from django.db.models.signals import post_save
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django_q.models import OrmQ

from django_workflow import run_work
from django_workflow.engine import run_step
from django_workflow.models import TransitionLog
from django_workflow.signals import step_changed, work_fired
from django_workflow.testing import run_due_work
from tests.moments import T
from tests.testapp.models import (
    Batch,
    Candidate,
    Decision,
    Escalation,
    Order,
    Proposal,
    SideEffect,
)

queued_on_the_broker = override_settings(DJANGO_WORKFLOW={"TASK_OPTIONS": {"sync": False}})


@pytest.fixture
def changes():
    """What each ``step_changed`` receiver saw: the trigger, the step it announced, the
    step the instance was in."""
    seen = []

    def receiver(sender, instance, to_state, trigger, **kwargs):
        seen.append((trigger, to_state, instance.current_step))

    step_changed.connect(receiver)
    yield seen
    step_changed.disconnect(receiver)


def queued():
    """(model label, step) of every automatic step waiting on the broker."""
    return sorted(tuple(task.task["args"]) for task in OrmQ.objects.all())


def logged(record):
    rows = TransitionLog.objects.filter(object_id=str(record.pk))
    return list(rows.values_list("triggered_by", "from_state", "to_state"))


pytestmark = pytest.mark.django_db


def test_creation_logs_announces_and_queues_the_initial_automatic_step(committed, changes):
    with queued_on_the_broker, committed():
        candidate = Candidate.objects.create(resume_words=700)
    assert logged(candidate) == [("initial", "", "screening")]
    assert changes == [("initial", "screening", "screening")]
    assert queued() == [("testapp.Candidate", "screening")]


def test_a_manual_transition_logs_announces_and_queues_what_follows(committed, changes):
    order = Order.objects.create()
    with queued_on_the_broker, committed():
        order.place()
    assert logged(order)[-1] == ("manual", "draft", "charge")
    assert changes[-1] == ("manual", "charge", "charge")
    assert queued() == [("testapp.Order", "charge")]


def test_an_automatic_step_logs_announces_and_queues_the_next_one(committed, changes):
    order = Order.objects.create()
    Order.objects.filter(pk=order.pk).update(status="charge")
    with queued_on_the_broker, committed():
        assert run_step(Order, order.pk, "charge") == "reserve"
    assert logged(order)[-1] == ("automatic", "charge", "reserve")
    assert changes[-1] == ("automatic", "reserve", "reserve")
    assert queued() == [("testapp.Order", "reserve")]


def test_the_error_path_logs_and_announces(committed, changes):
    order = Order.objects.create(fail_at="charge")
    Order.objects.filter(pk=order.pk).update(status="charge")
    with committed():
        assert run_step(Order, order.pk, "charge") == "payment_failed"
    assert logged(order)[-1] == ("error_path", "charge", "payment_failed")
    assert changes[-1] == ("error_path", "payment_failed", "payment_failed")


def test_a_transition_timeout_logs_announces_and_queues_the_automatic_step(
    clock, committed, changes
):
    escalation = Escalation.objects.create()
    clock.move_to(T + timedelta(days=1), tick=False)
    with queued_on_the_broker, committed():
        assert run_work(Escalation, "timeout:open.escalate") == 1
    assert logged(escalation)[-1] == ("timeout", "open", "escalating")
    assert changes[-1] == ("timeout", "escalating", "escalating")
    assert queued() == [("testapp.Escalation", "escalating")]
    assert Escalation.objects.get(pk=escalation.pk).state_entered_at == T + timedelta(days=1)


def test_an_action_timeout_logs_signals_fires_once_and_re_arms_on_re_entry(clock, committed):
    proposal = Proposal.objects.create()
    fired = []

    def listener(sender, work, count, **kwargs):
        fired.append((work, count))

    work_fired.connect(listener)
    clock.move_to(T + timedelta(days=2), tick=False)
    try:
        assert run_work(Proposal, "timeout:review.reminder") == 1
        assert run_work(Proposal, "timeout:review.reminder") == 0  # once per round
    finally:
        work_fired.disconnect(listener)
    assert ("timeout:review.reminder", 1) in fired
    assert ("timeout", "review", "review") in logged(proposal)
    stored = Proposal.objects.get(pk=proposal.pk)
    assert stored.review_reminder_fired_at == T + timedelta(days=2)
    stored.bounce()  # re-entering the step starts a new round
    assert stored.review_reminder_fired_at is None
    clock.move_to(T + timedelta(days=4), tick=False)
    assert run_work(Proposal, "timeout:review.reminder") == 1
    assert Proposal.objects.get(pk=proposal.pk).reminders == 2


def test_an_every_logs_and_remembers_its_last_firing(clock):
    proposal = Proposal.objects.create()
    clock.move_to(T + timedelta(days=2), tick=False)
    assert run_work(Proposal, "every:review.nag") == 1
    stored = Proposal.objects.get(pk=proposal.pk)
    assert (stored.nags, stored.review_nag_last_fired_at) == (1, T + timedelta(days=2))
    assert logged(proposal).count(("timeout", "review", "review")) == 1


def test_undo_and_redo_log_announce_and_queue(committed, changes):
    actor = "alice"
    decision = Decision.objects.create()
    decision.approve(actor=actor)
    with queued_on_the_broker, committed():
        decision.undo(actor=actor)
    assert logged(decision)[-1] == ("undo", "checking", "pending")
    assert changes[-1] == ("undo", "pending", "pending")
    with queued_on_the_broker, committed():
        decision.undo(actor=actor)  # redo
    assert changes[-1] == ("undo", "checking", "checking")
    assert queued() == [("testapp.Decision", "checking")]


@pytest.mark.django_db(transaction=True)
def test_receivers_see_the_new_step_outside_any_transaction(changes):
    order = Order.objects.create()
    with queued_on_the_broker:
        order.place()
    assert changes[-1] == ("manual", "charge", "charge")


@pytest.mark.django_db(transaction=True)
def test_receivers_see_the_new_step_after_an_outer_transaction_commits(changes):
    order = Order.objects.create()
    with queued_on_the_broker, transaction.atomic(using=router.db_for_write(Order)):
        order.place()
        assert changes[-1:] == [("initial", "draft", "draft")]  # nothing sent before commit
    assert changes[-1] == ("manual", "charge", "charge")


def test_bulk_moves_log_each_record(clock):
    batches = Batch.objects.bulk_create([Batch() for _ in range(3)])
    clock.move_to(T + timedelta(days=2), tick=False)
    assert run_work(Batch, "timeout:waiting.expire") == 3
    assert all(logged(b)[-1] == ("timeout", "waiting", "expired") for b in batches)


def test_action_timeouts_commit_record_by_record_so_a_crash_repeats_only_the_one_in_flight(clock):
    Batch.objects.bulk_create([Batch() for _ in range(5)])
    clock.move_to(T + timedelta(days=1), tick=False)

    def crash_on_the_third(sender, instance, created, **kwargs):
        if SideEffect.objects.count() == 3:
            raise KeyboardInterrupt  # the worker dies mid-action

    post_save.connect(crash_on_the_third, sender=SideEffect)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_work(Batch, "timeout:waiting.ping")
    finally:
        post_save.disconnect(crash_on_the_third, sender=SideEffect)
    assert SideEffect.objects.count() == 2  # the third rolled back with its fired column
    assert Batch.objects.filter(waiting_ping_fired_at__isnull=False).count() == 2
    assert run_work(Batch, "timeout:waiting.ping") == 3  # the next poll fires the rest once
    assert SideEffect.objects.count() == 5


def test_a_record_in_a_step_no_longer_declared_is_skipped_by_every_path(clock):
    proposal = Proposal.objects.create()
    Proposal.objects.filter(pk=proposal.pk).update(state="retired_step")
    clock.move_to(T + timedelta(days=30), tick=False)
    assert run_due_work() == {}
    stranded = Proposal.objects.get(pk=proposal.pk)
    assert (stranded.pending_deadlines(), stranded.available_actions()) == ([], [])
    assert run_step(Proposal, proposal.pk, "retired_step") is None


def test_an_action_that_changes_no_field_fires_with_one_narrow_update(clock):
    batch = Batch.objects.create()
    clock.move_to(T + timedelta(days=1, minutes=1))
    with CaptureQueriesContext(connections[router.db_for_write(Batch)]) as seen:
        assert run_work(Batch, "timeout:waiting.ping") == 1
    table = Batch._meta.db_table
    update = f'UPDATE "{table}"'  # on PostgreSQL the log row's INSERT comes first, in a WITH
    sent = [query["sql"] for query in seen.captured_queries]
    updates = [sql[sql.index(update) :] for sql in sent if update in sql]
    assert len(updates) == 1
    assert "waiting_ping_fired_at" in updates[0] and "next_due_at" in updates[0]
    assert '"state"' not in updates[0].split("WHERE")[0]  # only the workflow's columns
    stored = Batch.objects.get(pk=batch.pk)
    assert stored.waiting_ping_fired_at is not None
    assert stored.next_due_at == stored.state_entered_at + timedelta(days=2)  # expire is next
