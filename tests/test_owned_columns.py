"""The workflow owns its columns: ``save()`` never writes the step, the entry instant
or a fired column (docs/transitions.md)."""

from datetime import timedelta

import pytest

from django_workflow import DirectStepChange
from django_workflow.firing import run_work
from django_workflow.models import TransitionLog
from tests.moments import T
from tests.testapp.models import Order, Proposal

pytestmark = pytest.mark.django_db


def test_a_stale_instance_saved_after_the_record_moved_keeps_the_new_step(clock):
    stale = Order.objects.create()
    clock.move_to(T + timedelta(hours=1), tick=False)
    Order.objects.get(pk=stale.pk).place()  # another process moves it
    stale.fail_at = "pack"  # an admin form saving an unrelated field
    stale.save()
    stored = Order.objects.get(pk=stale.pk)
    assert (stored.status, stored.fail_at) == ("charge", "pack")
    assert stored.state_entered_at == T + timedelta(hours=1)
    assert list(TransitionLog.objects.filter(object_id=str(stale.pk)).values_list("to_state")) == [
        ("draft",),
        ("charge",),
    ]


def test_assigning_a_step_and_saving_raises_and_writes_nothing():
    order = Order.objects.create()
    order.status = "shipped"
    order.fail_at = "pack"
    with pytest.raises(DirectStepChange) as refused:
        order.save()
    assert isinstance(refused.value, ValueError)
    stored = Order.objects.get(pk=order.pk)
    assert (stored.status, stored.fail_at) == ("draft", "")


def test_saving_with_update_fields_of_the_step_writes_nothing_of_it():
    order = Order.objects.create()
    Order.objects.filter(pk=order.pk).update(fail_at="ship")
    order.save(update_fields=["status", "state_entered_at"])
    assert Order.objects.get(pk=order.pk).fail_at == "ship"


def test_a_stale_save_does_not_clear_a_fired_column(clock):
    stale = Proposal.objects.create()
    clock.move_to(T + timedelta(days=2), tick=False)
    assert run_work(Proposal, "timeout:review.reminder") == 1
    stale.reminders = 0  # a stale instance of an unrelated form
    stale.save()
    assert Proposal.objects.get(pk=stale.pk).review_reminder_fired_at == T + timedelta(days=2)
    assert run_work(Proposal, "timeout:review.reminder") == 0  # still fired this round


def test_moving_an_anchor_later_with_save_still_re_arms(clock):
    proposal = Proposal.objects.create(submitted_at=T)
    clock.move_to(T + timedelta(hours=1), tick=False)
    assert run_work(Proposal, "timeout:review.follow_up") == 1
    proposal = Proposal.objects.get(pk=proposal.pk)
    proposal.submitted_at = T + timedelta(hours=3)
    proposal.save()
    assert proposal.review_follow_up_fired_at is None
    clock.move_to(T + timedelta(hours=4), tick=False)
    assert run_work(Proposal, "timeout:review.follow_up") == 1
    assert Proposal.objects.get(pk=proposal.pk).follow_ups == 2


def test_a_stale_re_arming_save_leaves_a_record_that_moved_on_alone(clock):
    stale = Proposal.objects.create(submitted_at=T)
    clock.move_to(T + timedelta(hours=1), tick=False)
    assert run_work(Proposal, "timeout:review.follow_up") == 1
    Proposal.objects.get(pk=stale.pk).approve()
    stale.submitted_at = T + timedelta(hours=3)
    stale.save()
    stored = Proposal.objects.get(pk=stale.pk)
    assert (stored.state, stored.submitted_at) == ("approved", T + timedelta(hours=3))
