"""Code in transitions: ``Transition(when=…)``, ``Transition(action=…)`` and
``Workflow.from_any_step`` (docs/transitions.md)."""

from datetime import UTC, datetime

import pytest
from django.db.models import Q

from django_workflow import StaleRecord, TransitionNotAllowed
from django_workflow.model.evaluation import holds
from django_workflow.model.graph import edges
from django_workflow.models import TransitionLog
from tests.testapp.models import Expense, Proposal

pytestmark = pytest.mark.django_db


def test_when_hides_the_transition_and_refuses_the_call_until_it_holds():
    expense = Expense.objects.create(amount=80)
    assert "approve" not in expense.available_actions()
    assert "fast_track" not in expense.available_actions()  # a callable guard
    with pytest.raises(TransitionNotAllowed):
        expense.approve(approved_by="ana")
    assert Expense.objects.get(pk=expense.pk).state == "submitted"
    Expense.objects.filter(pk=expense.pk).update(receipt=True)
    expense.refresh_from_db()
    assert "approve" in expense.available_actions()


def test_when_sees_the_accepted_values():
    expense = Expense.objects.create()
    expense.attach(receipt=True)  # the guard reads the value the call brings
    assert Expense.objects.get(pk=expense.pk).receipt is True
    with pytest.raises(TransitionNotAllowed):
        Expense.objects.get(pk=expense.pk).attach(receipt=False)


def test_an_action_runs_in_the_transaction_with_the_accepted_values_and_its_writes_stay():
    expense = Expense.objects.create(receipt=True)
    expense.approve(approved_by="ana")
    stored = Expense.objects.get(pk=expense.pk)
    assert (stored.state, stored.note) == ("approved", "approved by ana, in submitted")
    assert expense.state == "approved"


def test_a_failing_action_rolls_everything_back_and_reaches_the_caller():
    expense = Expense.objects.create()
    with pytest.raises(RuntimeError, match="payment system"):
        expense.explode()
    stored = Expense.objects.get(pk=expense.pk)
    assert (stored.state, stored.note) == ("submitted", "")
    assert TransitionLog.objects.filter(object_id=str(expense.pk)).count() == 1  # initial


def test_an_action_never_runs_on_a_record_that_moved_meanwhile():
    expense = Expense.objects.create(receipt=True)
    Expense.objects.get(pk=expense.pk).cancel()
    with pytest.raises((StaleRecord, TransitionNotAllowed)):
        expense.approve(approved_by="ana")
    assert Expense.objects.get(pk=expense.pk).note == ""


def test_from_any_step_is_offered_in_every_other_non_terminal_step():
    expense = Expense.objects.create(receipt=True, amount=10)
    assert expense.available_actions()[-1] == "cancel"
    expense.fast_track()
    assert "cancel" in expense.available_actions()
    expense.cancel(comment="duplicate")
    assert expense.state == "cancelled" and expense.available_actions() == []
    assert Expense.workflow.transition_label("cancel") == "Cancel the expense"
    cancels = {e.source for e in edges(Expense.workflow) if e.label == "cancel"}
    assert cancels == {"submitted", "approved", "paid"}


def test_a_q_over_a_calculation_reads_the_instances_values():
    proposal = Proposal(submitted_at=datetime(2026, 6, 1, 9, 0, tzinfo=UTC))  # due 11:00
    assert holds(Q(answer_due__gt=datetime(2026, 6, 1, 10, 0, tzinfo=UTC)), proposal, "default")
    assert not holds(Q(answer_due__gt=datetime(2026, 6, 1, 12, 0, tzinfo=UTC)), proposal, "default")
