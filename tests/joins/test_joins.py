"""Joins (docs/transitions.md, "Joins: a parent waiting for its children"): a parent in a
step holding ``Join("parcels", all_in=[...], to=..., any_in={...})`` moves on, trigger
``join``, once its children are done — evaluated at its entry and at every child's step
change, creation and deletion."""

import pytest
from django.db import transaction

from django_workflow import Join, Step, Transition
from django_workflow.checks import check_model
from django_workflow.models import TransitionLog
from django_workflow.signals import step_changed
from tests.testapp.models import Carrier, Consignment, Parcel

pytestmark = pytest.mark.django_db


def picking(parcels=2):
    """A consignment closed for picking with ``parcels`` open parcels."""
    consignment = Consignment.objects.create()
    made = [Parcel.objects.create(consignment=consignment) for _ in range(parcels)]
    consignment.close()
    return consignment, made


def joined(consignment):
    rows = TransitionLog.objects.filter(
        content_type__model="consignment", object_id=str(consignment.pk), triggered_by="join"
    )
    return list(rows.values_list("from_state", "to_state", "data"))


def step(record):
    record.refresh_from_db()
    return record.state


def test_a_parent_waits_while_a_child_is_not_done():
    consignment, parcels = picking()
    parcels[0].pack()
    assert step(consignment) == "picking"
    assert joined(consignment) == []


def test_the_last_child_finishing_moves_the_parent_once_naming_the_child():
    consignment, parcels = picking()
    parcels[0].void()
    parcels[1].pack()
    assert step(consignment) == "shipping"
    child = f"testapp.Parcel {parcels[1].pk}"
    assert joined(consignment) == [("picking", "shipping", {"child": child})]


def test_a_parent_without_children_moves_on_as_it_enters_the_join_step():
    consignment, _ = picking(parcels=0)
    assert step(consignment) == "shipping"
    assert joined(consignment) == [("picking", "shipping", None)]


def test_a_parent_whose_children_are_done_before_it_enters_moves_on_at_entry():
    consignment = Consignment.objects.create()
    Parcel.objects.create(consignment=consignment).pack()
    consignment.close()
    assert step(consignment) == "shipping"


def test_children_finishing_while_the_parent_is_elsewhere_move_nothing():
    consignment = Consignment.objects.create()
    Parcel.objects.create(consignment=consignment).pack()
    assert step(consignment) == "filling"
    assert joined(consignment) == []


def test_one_child_in_an_any_in_step_routes_the_parent_at_once():
    consignment, parcels = picking(parcels=3)
    parcels[1].lose()
    assert step(consignment) == "on_hold"
    child = f"testapp.Parcel {parcels[1].pk}"
    assert joined(consignment) == [("picking", "on_hold", {"child": child})]


def test_deleting_the_last_unfinished_child_completes_the_join():
    consignment, parcels = picking()
    parcels[0].pack()
    pk = parcels[1].pk
    parcels[1].delete()
    assert step(consignment) == "shipping"
    assert joined(consignment) == [("picking", "shipping", {"child": f"testapp.Parcel {pk}"})]


def test_a_child_created_while_the_parent_waits_keeps_it_waiting():
    consignment, parcels = picking(parcels=1)
    Parcel.objects.bulk_create([Parcel(consignment=consignment)])
    parcels[0].pack()
    assert step(consignment) == "picking"  # the new parcel is open


def test_a_bulk_move_of_children_evaluates_each_parent_once():
    first, _ = picking(parcels=3)
    second, _ = picking(parcels=2)
    moved = Parcel.objects.filter(consignment__in=[first, second]).transition("pack")
    assert list(moved.values()) == ["packed"] * 5
    assert step(first) == step(second) == "shipping"
    assert len(joined(first)) == len(joined(second)) == 1
    lowest = Parcel.objects.filter(consignment=first).order_by("pk").first()
    assert joined(first)[0][2] == {"child": f"testapp.Parcel {lowest.pk}"}


def test_the_parents_move_rolls_back_with_the_childs():
    consignment, parcels = picking(parcels=1)
    with pytest.raises(RuntimeError), transaction.atomic():
        parcels[0].pack()
        assert step(consignment) == "shipping"
        raise RuntimeError("the caller gives up")
    assert step(consignment) == "picking"
    assert joined(consignment) == []


# The declaration's checks (docs/checks.md) ------------------------------------------


class ChildWorkflow:
    open = Step(Transition("void", to="void"))
    void = Step()


@pytest.fixture
def parent_with(declare, with_items):
    """``parent_with(join, child_workflow, action=None)``: a throwaway parent waiting in
    ``waiting`` on ``join``, and a child pointing at it with related_name "items" (a plain
    model when ``child_workflow`` is None)."""

    def make(join, child_workflow, action=None):
        waiting = Step(join, action=action, on_success="done" if action else None)

        class Workflow:
            start = Step(Transition("close", to="waiting"))
            done = Step()

        Workflow.waiting = waiting
        parent = declare(Workflow, prepare=lambda self: None)
        return with_items(parent, child_workflow)

    return make


def test_a_well_formed_join_passes_the_checks(parent_with):
    join = Join("items", all_in=["void"], to="done", any_in={"open": "start"})
    assert check_model(parent_with(join, ChildWorkflow)) == []


def test_a_join_over_a_relation_the_model_does_not_have_is_an_error(parent_with):
    [error] = check_model(parent_with(Join("lines", all_in=["void"], to="done"), ChildWorkflow))
    assert error.id == "django_workflow.E058"
    assert "'lines'" in error.msg and "items" in error.hint


def test_a_join_over_a_model_without_a_workflow_is_an_error(parent_with):
    [error] = check_model(parent_with(Join("items", all_in=["void"], to="done"), None))
    assert error.id == "django_workflow.E059"
    assert "has no workflow" in error.msg and "WorkflowModel" in error.hint


def test_a_join_naming_steps_the_children_do_not_have_is_an_error(parent_with):
    join = Join("items", all_in=["void"], to="done", any_in={"lost": "start"})
    [error] = check_model(parent_with(join, ChildWorkflow))
    assert error.id == "django_workflow.E060"
    assert "'lost'" in error.msg and "open, void" in error.hint


def test_a_join_sending_the_parent_to_a_step_it_does_not_have_is_an_error(parent_with):
    join = Join("items", all_in=["void"], to="shipped", any_in={"open": "done"})
    [error] = check_model(parent_with(join, ChildWorkflow))
    assert error.id == "django_workflow.E061"
    assert "'shipped'" in error.msg and "start, done, waiting" in error.hint


def test_a_join_in_an_automatic_step_is_an_error(parent_with):
    join = Join("items", all_in=["void"], to="done")
    [error] = check_model(parent_with(join, ChildWorkflow, action="prepare"))
    assert error.id == "django_workflow.E062"
    assert "automatic" in error.msg


def test_the_callers_instance_follows_a_parent_moved_on_at_its_entry():
    consignment, _ = picking(parcels=0)
    assert consignment.state == "shipping"


def test_deleting_a_grandparent_moves_none_of_the_parents_it_takes(committed):
    # Release 3 logged a join for each consignment being deleted, and announced its move
    # after commit, for records that no longer existed.
    carrier = Carrier.objects.create(name="Swift")
    taken, _ = picking(parcels=2)
    kept, (left, _other) = picking(parcels=2)
    Consignment.objects.filter(pk=taken.pk).update(carrier=carrier)
    Parcel.objects.filter(consignment=kept).exclude(pk=left.pk).update(state="packed")
    announced = []

    def heard(sender, instance, **kwargs):
        announced.append((sender, instance.pk, kwargs["to_state"]))

    step_changed.connect(heard, weak=False)
    try:
        with committed():
            carrier.delete()
        assert joined(taken) == [] and announced == []
        with committed():
            left.delete()  # a child deleted alone still completes its parent's join
        assert step(kept) == "shipping"
        assert announced == [(Consignment, kept.pk, "shipping")]
    finally:
        step_changed.disconnect(heard)


def test_deleting_a_waiting_parent_with_its_children_writes_no_join():
    consignment, _ = picking(parcels=2)
    Consignment.objects.filter(pk=consignment.pk).delete()
    assert joined(consignment) == []
    other, _ = picking(parcels=1)
    other.delete()
    assert joined(other) == []


def test_a_deletion_refused_half_way_leaves_no_mark_on_its_parents():
    # A mark outliving a refused deletion kept the parent's join from completing later.
    from django.db.models.signals import post_delete

    carrier = Carrier.objects.create(name="Refused")
    consignment, (left, other) = picking(parcels=2)
    Consignment.objects.filter(pk=consignment.pk).update(carrier=carrier)
    Parcel.objects.filter(pk=other.pk).update(state="packed")

    def refuse(sender, instance, **kwargs):  # every pre_delete is sent by then
        raise RuntimeError("kept")

    post_delete.connect(refuse, sender=Parcel)
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            carrier.delete()
    finally:
        post_delete.disconnect(refuse, sender=Parcel)
    left.delete()  # the last open parcel: the join completes
    assert step(consignment) == "shipping"
