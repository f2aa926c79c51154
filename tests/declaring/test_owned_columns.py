"""The workflow owns its columns: ``save()`` never writes the step, the entry instant
or a fired column (docs/transitions.md)."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction

from django_workflow import DirectStepChange, run_work
from django_workflow.models import TransitionLog
from tests.moments import T
from tests.testapp.models import PROPOSAL_SAVES, Decision, Order, Proposal

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


def test_a_stale_save_naming_the_step_in_update_fields_writes_nothing_of_it(clock):
    stale = Order.objects.create()
    clock.move_to(T + timedelta(hours=1), tick=False)
    Order.objects.get(pk=stale.pk).place()
    stale.fail_at = "ship"
    stale.save(update_fields=["status", "state_entered_at", "fail_at"])
    stored = Order.objects.get(pk=stale.pk)
    assert (stored.status, stored.state_entered_at, stored.fail_at) == (
        "charge",
        T + timedelta(hours=1),
        "ship",
    )


def test_a_new_instance_with_the_key_of_an_existing_record_does_not_overwrite_it():
    order = Order.objects.create()
    Order.objects.get(pk=order.pk).place()
    with pytest.raises(IntegrityError), transaction.atomic():
        Order(pk=order.pk, fail_at="pack").save()
    assert Order.objects.get(pk=order.pk).status == "charge"
    assert (
        TransitionLog.objects.filter(object_id=str(order.pk), triggered_by="initial").count() == 1
    )


def test_a_new_instance_with_the_auto_key_of_an_existing_record_does_not_rewind_it():
    decision = Decision.objects.create()
    decision.reject()
    with pytest.raises(IntegrityError), transaction.atomic():
        Decision(pk=decision.pk).save()  # Django alone would UPDATE the row it names
    assert Decision.objects.get(pk=decision.pk).state == "rejected"


def test_a_copy_saved_with_no_key_is_a_new_record_in_the_initial_step():
    order = Order.objects.create()
    Order.objects.get(pk=order.pk).place()
    copy = Order.objects.get(pk=order.pk)
    copy.pk = None
    copy.save()
    assert copy.pk != order.pk
    assert Order.objects.get(pk=copy.pk).status == "draft"
    assert Order.objects.get(pk=order.pk).status == "charge"


def test_a_step_assigned_after_a_deferred_load_is_refused():
    order = Order.objects.create()
    partial = Order.objects.only("fail_at").get(pk=order.pk)
    partial.status = "shipped"
    with pytest.raises(DirectStepChange):
        partial.save()
    assert Order.objects.get(pk=order.pk).status == "draft"


def test_a_partial_refresh_keeps_the_step_the_instance_was_loaded_in():
    order = Order.objects.create()
    order.status = "shipped"
    order.refresh_from_db(fields=["fail_at"])
    with pytest.raises(DirectStepChange):
        order.save()


def test_a_firing_goes_through_the_models_own_save(clock):
    proposal = Proposal.objects.create()
    PROPOSAL_SAVES.clear()
    clock.move_to(T + timedelta(days=2), tick=False)
    assert run_work(Proposal, "timeout:review.reminder") == 1
    assert [proposal.pk] == PROPOSAL_SAVES
    stored = Proposal.objects.get(pk=proposal.pk)
    assert (stored.reminders, stored.review_reminder_fired_at) == (1, T + timedelta(days=2))


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
