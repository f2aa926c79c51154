"""Cascades (docs/transitions.md, "Cascades: a parent moving its children"):
``Transition(..., cascade={"lines": "void"})`` moves, in the parent's transaction, every
child whose step offers ``void``; the others stay, and the parent's log row counts them."""

import pytest
from django.contrib.auth.models import User

from django_workflow import StaleRecord, Step, Transition, WorkflowPermissionDenied
from django_workflow.checks import check_model
from django_workflow.models import PendingEffect, TransitionLog
from django_workflow.reading import wording
from django_workflow.signals import step_changed
from tests.testapp.models import Purchase, PurchaseLine, Reservation

pytestmark = pytest.mark.django_db


@pytest.fixture
def purchase():
    """A purchase in picking with four lines: two open, one inspected, one packed."""
    purchase = Purchase.objects.create()
    lines = [PurchaseLine.objects.create(purchase=purchase) for _ in range(4)]
    lines[2].inspect()
    lines[3].inspect()
    lines[3].pack()
    return purchase


def steps(purchase):
    return list(purchase.lines.order_by("pk").values_list("state", flat=True))


def log(record, trigger):
    rows = TransitionLog.objects.filter(object_id=str(record.pk), triggered_by=trigger)
    return rows.filter(content_type__model=type(record).__name__.lower())


def test_children_in_a_step_offering_the_transition_take_it_and_the_others_stay(purchase):
    purchase.cancel()
    assert purchase.state == "cancelled"
    assert steps(purchase) == ["void", "void", "void", "packed"]


def test_the_parents_log_row_counts_the_children_moved_and_those_that_stayed(purchase):
    purchase.cancel(data={"reason": "customer"})
    [row] = log(purchase, "manual")
    assert row.data == {
        "reason": "customer",
        "cascaded": 3,
        "cascade": {"lines": {"moved": 3, "stayed": 1}},
    }


def test_children_are_logged_as_a_cascade_with_the_parents_actor(purchase):
    alice = User.objects.create_user("alice")
    purchase.cancel(actor=alice)
    rows = TransitionLog.objects.filter(triggered_by="cascade").order_by("pk")
    assert [(r.from_state, r.to_state, r.transition_name, r.actor) for r in rows] == [
        ("open", "void", "void", alice),
        ("open", "void", "void", alice),
        ("checked", "void", "void", alice),
    ]


def test_each_moved_child_owes_the_on_enter_of_its_new_step(purchase):
    purchase.cancel()
    owed = PendingEffect.objects.filter(content_type__model="purchaseline", step="void")
    voided = purchase.lines.filter(state="void")
    assert sorted(owed.values_list("object_id", flat=True)) == sorted(
        str(pk) for pk in voided.values_list("pk", flat=True)
    )
    assert {e.entered_at for e in owed} == {line.state_entered_at for line in voided}


def test_a_childs_log_row_reads_as_its_transitions_label(purchase):
    purchase.cancel()
    row = TransitionLog.objects.filter(triggered_by="cascade", from_state="open").first()
    assert wording.row_label(PurchaseLine.workflow, row) == "Void line"
    assert wording.trigger_words(row) == "cascade"


def test_the_childrens_policy_is_not_asked(purchase):
    clerk = User.objects.create_user("clerk")  # not staff: may not void a line by hand
    with pytest.raises(WorkflowPermissionDenied):
        purchase.lines.filter(state="open").first().void(actor=clerk)
    purchase.cancel(actor=clerk)
    assert steps(purchase) == ["void", "void", "void", "packed"]


def test_a_child_whose_transition_condition_does_not_hold_stays(purchase):
    inspected = purchase.lines.get(state="checked")
    PurchaseLine.objects.filter(pk=inspected.pk).update(disputed=True)
    purchase.cancel()
    assert steps(purchase) == ["void", "void", "checked", "packed"]
    assert log(purchase, "manual").get().data["cascade"] == {"lines": {"moved": 2, "stayed": 2}}


def test_a_child_whose_transition_cascades_moves_its_own_children(purchase):
    inspected = purchase.lines.get(state="checked")
    held = Reservation.objects.create(line=inspected)
    purchase.cancel()
    held.refresh_from_db()
    assert held.state == "released"
    assert log(held, "cascade").get().from_state == "held"
    assert log(inspected, "cascade").get().data == {
        "cascaded": 1,
        "cascade": {"reservations": {"moved": 1, "stayed": 0}},
    }


def test_a_parent_without_children_moves_and_counts_none():
    purchase = Purchase.objects.create()
    purchase.cancel()
    assert log(purchase, "manual").get().data == {
        "cascaded": 0,
        "cascade": {"lines": {"moved": 0, "stayed": 0}},
    }


def test_a_stale_parent_moves_no_child(purchase):
    seen_earlier = Purchase.objects.get(pk=purchase.pk)
    purchase.cancel()
    late = PurchaseLine.objects.create(purchase=purchase)  # a line added after the cancel
    with pytest.raises(StaleRecord):
        seen_earlier.cancel()
    late.refresh_from_db()
    assert late.state == "open"
    assert not log(late, "cascade").exists()
    assert log(purchase, "manual").count() == 1


def test_signals_of_the_children_go_out_after_commit(purchase, committed):
    received = []

    def listener(sender, **kwargs):
        received.append((sender, kwargs["to_state"], kwargs["trigger"]))

    step_changed.connect(listener)
    try:
        with committed():
            purchase.cancel()
            assert received == []
    finally:
        step_changed.disconnect(listener)
    assert sorted(received, key=str) == sorted(
        [(PurchaseLine, "void", "cascade")] * 3 + [(Purchase, "cancelled", "manual")], key=str
    )


def test_a_bulk_transition_cascades_each_record_over_its_own_children(purchase):
    other = Purchase.objects.create()
    PurchaseLine.objects.create(purchase=other)
    outcomes = Purchase.objects.filter(pk__in=[purchase.pk, other.pk]).transition("cancel")
    assert outcomes == {purchase.pk: "cancelled", other.pk: "cancelled"}
    assert steps(purchase) == ["void", "void", "void", "packed"]
    assert steps(other) == ["void"]
    assert log(other, "manual").get().data["cascaded"] == 1
    assert log(purchase, "manual").get().data["cascaded"] == 3


# The declaration's checks (docs/checks.md) ------------------------------------------


@pytest.fixture
def parent_with(declare, with_items):
    """``parent_with(cascade, child_workflow)``: a throwaway parent declaring ``cancel``
    with ``cascade``, and a child pointing at it with related_name "items" (a plain
    model when ``child_workflow`` is None)."""

    def make(cascade, child_workflow):
        class Workflow:
            open = Step(Transition("cancel", to="cancelled", cascade=cascade))
            cancelled = Step()

        parent = declare(Workflow)
        return with_items(parent, child_workflow)

    return make


class ChildWorkflow:
    open = Step(Transition("void", to="void"))
    void = Step()


def test_a_cascade_over_a_relation_the_model_does_not_have_is_an_error(parent_with):
    [error] = check_model(parent_with({"lines": "void"}, ChildWorkflow))
    assert error.id == "django_workflow.E055"
    assert "'lines'" in error.msg and "items" in error.hint


def test_a_cascade_to_a_model_without_a_workflow_is_an_error(parent_with):
    [error] = check_model(parent_with({"items": "void"}, None))
    assert error.id == "django_workflow.E056"
    assert "has no workflow" in error.msg and "WorkflowModel" in error.hint


def test_a_cascade_naming_a_transition_the_child_does_not_declare_is_an_error(parent_with):
    [error] = check_model(parent_with({"items": "scrap"}, ChildWorkflow))
    assert error.id == "django_workflow.E057"
    assert "'scrap'" in error.msg and "void" in error.hint


def test_a_cascade_that_is_no_mapping_is_an_error(parent_with):
    [error] = check_model(parent_with(["items"], ChildWorkflow))
    assert error.id == "django_workflow.E055"


def test_a_cascade_over_a_workflow_child_declaring_the_transition_is_accepted(parent_with):
    assert check_model(parent_with({"items": "void"}, ChildWorkflow)) == []


# Trees of one model: any depth, cycles in the data ---------------------------------------


def closed(nodes):
    from tests.testapp.models import Node

    return sorted(Node.objects.filter(pk__in=[n.pk for n in nodes]).values_list("state", flat=True))


def closing_rows(nodes):
    rows = TransitionLog.objects.filter(
        content_type__model="node", object_id__in=[str(n.pk) for n in nodes], to_state="closed"
    )
    return sorted(int(pk) for pk in rows.values_list("object_id", flat=True))


def test_a_tree_three_hundred_deep_closes_without_recursion():
    # Release 3 raised RecursionError past about 150 levels.
    from tests.testapp.models import Node

    chain = [Node.objects.create()]
    for _ in range(299):
        chain.append(Node.objects.create(parent=chain[-1]))
    chain[0].close()
    assert closed(chain) == ["closed"] * 300
    assert closing_rows(chain) == sorted(n.pk for n in chain)  # each once
    root_row = TransitionLog.objects.get(object_id=str(chain[0].pk), to_state="closed")
    assert root_row.data["cascaded"] == 1  # its one child; that child's row counts its own
    deepest = TransitionLog.objects.get(object_id=str(chain[-2].pk), to_state="closed")
    assert (deepest.triggered_by, deepest.data["cascaded"]) == ("cascade", 1)


def test_a_cycle_in_the_data_moves_each_record_once():
    from tests.testapp.models import Node

    first, second = Node.objects.create(), Node.objects.create()
    Node.objects.filter(pk=first.pk).update(parent=second)
    Node.objects.filter(pk=second.pk).update(parent=first)
    alone = Node.objects.create()
    Node.objects.filter(pk=alone.pk).update(parent=alone)  # its own parent
    Node.objects.get(pk=first.pk).close()
    Node.objects.get(pk=alone.pk).close()
    assert closed([first, second, alone]) == ["closed"] * 3
    assert closing_rows([first, second, alone]) == sorted([first.pk, second.pk, alone.pk])


def test_a_cascade_reaching_its_own_model_is_said_in_a_check():
    from tests.testapp.models import Node

    said = check_model(Node)  # close and sweep each cascade over children
    assert {m.id for m in said} == {"django_workflow.I001"} and len(said) == 2
    assert "transition 'close' cascades over 'children' back to testapp.Node itself" in said[0].msg


def test_a_refused_child_undoes_its_childrens_moves_and_what_they_announced(committed):
    # The walk's savepoints are atomic blocks: a refusal drops the after-commit hooks of
    # the moves it undoes (step_changed, queued work), as well as the moves.
    from tests.testapp.models import Node

    root = Node.objects.create()
    locked = Node.objects.create(parent=root, locked=True)
    below = Node.objects.create(parent=locked)
    heard = []

    def listen(sender, instance, **kwargs):
        heard.append((instance.pk, kwargs["to_state"]))

    step_changed.connect(listen, sender=Node, weak=False)
    try:
        with committed():
            Node.objects.get(pk=root.pk).close()
    finally:
        step_changed.disconnect(listen, sender=Node)
    assert closed([root, locked, below]) == ["closed", "open", "open"]
    assert heard == [(root.pk, "closed")]
    row = TransitionLog.objects.get(object_id=str(root.pk), to_state="closed")
    assert row.data["cascade"] == {"children": {"moved": 0, "stayed": 1}}


def test_a_record_its_own_parent_stays_out_of_its_plain_childrens_move():
    from tests.testapp.models import Node

    root = Node.objects.create()
    Node.objects.filter(pk=root.pk).update(parent=root)
    child = Node.objects.create(parent=root)
    Node.objects.get(pk=root.pk).sweep()  # its children archived in one UPDATE, not itself
    states = dict(Node.objects.filter(pk__in=[root.pk, child.pk]).values_list("pk", "state"))
    assert states == {root.pk: "closed", child.pk: "archived"}
