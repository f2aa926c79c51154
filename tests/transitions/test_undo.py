"""History, state_at, undo and redo, and every refusal (docs/history-and-undo.md)."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User

from django_workflow import StaleRecord, UndoNotPermitted, WorkflowPermissionDenied
from django_workflow.engine.attempts import start_attempt
from django_workflow.engine.undo import undoable
from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from tests.moments import T
from tests.testapp.models import Bottle, Candidate, Crate, Decision, Draft, Shipment

pytestmark = pytest.mark.django_db

ada = SimpleNamespace(name="ada")


def refusal(record, actor=None):
    with pytest.raises(UndoNotPermitted) as caught:
        record.undo(actor=actor)
    return caught.value.reason


def test_history_is_the_log_oldest_first(clock):
    decision = Decision.objects.create()
    clock.move_to(T + timedelta(minutes=1), tick=False)
    decision.hold(actor=ada)
    clock.move_to(T + timedelta(minutes=2), tick=False)
    decision.release(actor=ada)
    assert [(r.triggered_by, r.to_state) for r in decision.history()] == [
        ("initial", "pending"),
        ("manual", "held"),
        ("manual", "pending"),
    ]


def test_state_at_reads_the_log(clock):
    decision = Decision.objects.create()
    clock.move_to(T + timedelta(minutes=10), tick=False)
    decision.hold(actor=ada)
    assert decision.state_at(T - timedelta(seconds=1)) is None
    assert decision.state_at(T + timedelta(minutes=5)) == "pending"
    assert decision.state_at(T + timedelta(minutes=10)) == "held"


def test_undo_rewinds_the_step_only_and_points_at_what_it_reverses(clock):
    decision = Decision.objects.create()
    decision.approve(actor=ada, note="looks good")
    clock.move_to(T + timedelta(minutes=5), tick=False)
    decision.undo(actor=ada)
    stored = Decision.objects.get(pk=decision.pk)
    assert (stored.state, stored.state_entered_at) == ("pending", T + timedelta(minutes=5))
    assert stored.note == "looks good"  # attributes stay
    undo_row = decision.history().last()
    approve_row = decision.history().get(transition_name="approve")
    assert (undo_row.triggered_by, undo_row.reverses, undo_row.actor_repr) == (
        "undo",
        approve_row,
        str(ada),
    )
    assert (undo_row.from_state, undo_row.to_state) == ("checking", "pending")


def test_undoing_an_undo_is_redo_and_queues_an_automatic_step(clock, committed):
    decision = Decision.objects.create()
    decision.approve(actor=ada)  # no commit captured: checking has not run
    decision.undo(actor=ada)
    with committed():
        decision.undo(actor=ada)
    stored = Decision.objects.get(pk=decision.pk)
    assert stored.state == "approved"  # redo landed in checking, which ran
    redo = decision.history().get(triggered_by="undo", to_state="checking")
    assert redo.reverses.triggered_by == "undo"


def test_the_effective_history_leaves_out_undone_rows(clock):
    decision = Decision.objects.create()
    decision.reject(actor=ada)
    decision.undo(actor=ada)
    assert [r.to_state for r in decision.effective_history()] == ["pending"]
    decision.undo(actor=ada)  # redo: the rejection stands again
    assert [r.to_state for r in decision.effective_history()] == ["pending", "rejected"]


def test_undo_not_enabled():
    candidate = Candidate.objects.create()
    assert refusal(candidate, ada) == "undo_not_enabled"


def test_no_history():
    assert refusal(Decision.objects.create(), ada) == "no_history"


def test_not_undoable():
    decision = Decision.objects.create()
    decision.hold(actor=ada)
    assert refusal(decision, ada) == "not_undoable"


def test_an_automatic_step_change_is_not_undoable(committed):
    decision = Decision.objects.create()
    with committed():
        decision.approve(actor=ada)
    decision.refresh_from_db()
    assert decision.state == "approved"
    assert refusal(decision, ada) == "not_undoable"


def test_window_expired(clock):
    decision = Decision.objects.create()
    decision.reject(actor=ada)
    clock.move_to(T + timedelta(minutes=30, seconds=1), tick=False)
    assert refusal(decision, ada) == "window_expired"


def test_a_redo_counts_its_window_from_the_move_it_repeats(clock):
    decision = Decision.objects.create()
    decision.reject(actor=ada)
    clock.move_to(T + timedelta(minutes=20), tick=False)
    decision.undo(actor=ada)
    clock.move_to(T + timedelta(minutes=30, seconds=1), tick=False)
    assert refusal(decision, ada) == "window_expired"  # 10 min after the undo, 30 after reject
    assert Decision.objects.get(pk=decision.pk).state == "pending"


def test_a_move_whose_on_enter_effect_ran_cannot_be_undone(committed):
    shipment = Shipment.objects.create()
    shipment.ship(actor=ada)
    with committed():
        shipment.return_to_packing(actor=ada)  # on commit the worker prints the label
    assert Shipment.objects.get(pk=shipment.pk).labels_printed == 2  # creation's and this one
    assert refusal(shipment, ada) == "effect_ran"
    assert Shipment.objects.get(pk=shipment.pk).state == "packing"


def test_a_move_whose_entry_effect_has_not_run_yet_can_be_undone():
    shipment = Shipment.objects.create()
    shipment.ship(actor=ada)
    shipment.return_to_packing(actor=ada)  # no commit captured: nothing queued, nothing ran
    shipment.undo(actor=ada)
    assert Shipment.objects.get(pk=shipment.pk).state == "shipped"


def test_undoing_a_move_takes_back_the_effect_its_entry_owed():
    shipment = Shipment.objects.create()
    shipment.ship(actor=ada)
    shipment.return_to_packing(actor=ada)  # no commit captured: nothing ran yet
    shipment.undo(actor=ada)
    run_due_work()
    assert Shipment.objects.get(pk=shipment.pk).labels_printed == 1  # the creation's alone


def test_a_move_into_an_automatic_step_whose_action_is_running_cannot_be_undone(clock):
    decision = Decision.objects.create()
    decision.approve(actor=ada, note="fine")  # into checking; no commit captured
    work = Decision.workflow.work("step:checking")
    assert start_attempt(Decision, decision.pk, work, decision.state_entered_at, T, "default")
    assert refusal(decision, ada) == "effect_ran"


def test_no_actor():
    decision = Decision.objects.create()
    decision.reject(actor=ada)
    assert refusal(decision) == "no_actor"


def test_different_actor():
    decision = Decision.objects.create()
    first, second = User.objects.create_user("first"), User.objects.create_user("second")
    decision.reject(actor=first)
    assert refusal(decision, second) == "different_actor"
    decision.undo(actor=first)
    assert Decision.objects.get(pk=decision.pk).state == "pending"


def test_a_refused_undo_changes_nothing():
    decision = Decision.objects.create()
    decision.reject(actor=ada)
    before = list(TransitionLog.objects.values_list("id", flat=True))
    refusal(decision, SimpleNamespace(name="bob"))
    assert Decision.objects.get(pk=decision.pk).state == "rejected"
    assert list(TransitionLog.objects.values_list("id", flat=True)) == before


def test_the_undo_policy_is_enforced():
    draft = Draft.objects.create()
    draft.submit()
    with pytest.raises(WorkflowPermissionDenied):
        draft.undo(actor=SimpleNamespace(is_staff=False))
    draft.undo(actor=SimpleNamespace(is_staff=True, is_active=True))
    assert Draft.objects.get(pk=draft.pk).state == "writing"


def test_a_stale_instance_cannot_undo():
    decision = Decision.objects.create()
    decision.reject(actor=ada)
    stale = Decision.objects.get(pk=decision.pk)
    decision.undo(actor=ada)
    with pytest.raises(StaleRecord):
        stale.undo(actor=ada)
    assert Decision.objects.get(pk=decision.pk).state == "pending"


def test_a_record_moved_outside_the_workflow_is_not_undoable():
    decision = Decision.objects.create()
    decision.reject(actor=ada)
    Decision.objects.filter(pk=decision.pk).update(state="held")
    decision.refresh_from_db()
    assert refusal(decision, ada) == "not_undoable"


def test_the_log_names_undo_and_redo_however_long_the_chain():
    decision = Decision.objects.create()
    decision.reject(actor="ana")
    for _ in range(3):
        decision.undo(actor="ana")
    rows = list(decision.history().select_related("reverses"))
    assert [r.description for r in rows[-4:]] == [
        "reject",
        "undo of reject",
        "redo of reject",
        "undo of reject",
    ]


def test_a_move_that_cascaded_to_children_is_not_undone_and_nothing_changes():
    crate = Crate.objects.create()
    bottles = [Bottle.objects.create(crate=crate) for _ in range(3)]
    bottles[0].fill()
    crate.close()
    crate.cancel(actor=ada)  # voids the two open bottles (docs/transitions.md, "Cascades")
    assert undoable(crate, ada) is None  # the admin offers no undo button
    assert refusal(crate, ada) == "cascaded"
    assert Crate.objects.get(pk=crate.pk).state == "cancelled"
    assert list(crate.bottles.order_by("pk").values_list("state", flat=True)) == [
        "filled",
        "void",
        "void",
    ]
    assert not crate.history().filter(triggered_by="undo").exists()


def test_a_childs_move_that_completed_its_parents_join_is_not_undone():
    # Release 3 undid it: the bottle went back to open while its crate stayed sealed.
    from tests.testapp.models import Bottle, Crate

    crate = Crate.objects.create()
    first, last = Bottle.objects.create(crate=crate), Bottle.objects.create(crate=crate)
    crate.close()
    first.fill()
    first.workflow.undo()  # the join was not complete: this one is undone
    assert Bottle.objects.get(pk=first.pk).state == "open"
    first.refresh_from_db()
    first.fill()
    last.fill()  # completes the join: the crate is sealed
    assert Crate.objects.get(pk=crate.pk).state == "sealed"
    with pytest.raises(UndoNotPermitted) as refused:
        last.workflow.undo()
    assert refused.value.reason == "joined"
    assert Bottle.objects.get(pk=last.pk).state == "filled"
