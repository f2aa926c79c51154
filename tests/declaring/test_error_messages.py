"""What a refused call says, and what it refuses before writing anything:
docs/transitions.md (errors, conditions, comment and data)."""

import datetime

import pytest
from django.contrib.auth.models import User
from django.db.models import Q
from django.utils.translation import gettext_lazy

from django_workflow import (
    ConditionUnmet,
    InvalidLogValue,
    NoRouteMatched,
    StaleRecord,
    Step,
    Transition,
    TransitionNotAllowed,
    UnsavedRecord,
    WorkflowPermissionDenied,
)
from django_workflow.checks import check_model
from django_workflow.errors import staff_text
from django_workflow.model.conditions import unmet_reason
from django_workflow.model.log_values import MAX_DATA_BYTES, MAX_DATA_DEPTH
from django_workflow.models import TransitionLog
from tests.testapp.models import Decision, Expense, Order, Routed, Ticket

pytestmark = pytest.mark.django_db


def nested(depth):
    """``depth`` lists, one inside the other."""
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


# Messages name the code's identifiers, a label after a name where it says more; staff read
# labels only (staff_text); attributes keep the names --------------------------------------


def test_a_step_that_does_not_offer_the_transition_is_named_by_its_label():
    decision = Decision.objects.create()
    decision.hold()
    with pytest.raises(TransitionNotAllowed) as caught:
        decision.reject()
    assert str(caught.value) == (
        f"testapp.Decision {decision.pk}: step 'held' (“On hold”) offers no transition 'reject'."
    )
    assert staff_text(caught.value) == f"Decision {decision.pk}: On hold offers no “Reject”."
    assert (caught.value.step, caught.value.transition) == ("held", "reject")
    assert not isinstance(caught.value, ConditionUnmet)


def test_a_refused_actor_reads_as_a_person_not_a_repr():
    ticket = Ticket.objects.create()
    ann = User.objects.create_user("ann")
    with pytest.raises(WorkflowPermissionDenied) as caught:
        ticket.start(actor=ann)
    assert (
        str(caught.value) == f"ann may not call transition 'start' on testapp.Ticket {ticket.pk}."
    )
    assert staff_text(caught.value) == f"ann may not call “Start” on Ticket {ticket.pk}."
    assert (caught.value.transition, caught.value.actor) == ("start", ann)
    with pytest.raises(WorkflowPermissionDenied) as caught:
        ticket.start()
    assert str(caught.value) == (
        f"A call without an actor may not call transition 'start' on testapp.Ticket {ticket.pk}."
    )


def test_no_route_matched_names_the_transition_and_step_as_the_code_does():
    # Release 3 said "no route of “Decide” in Open": nothing to search the code for.
    routed = Routed.objects.create()
    with pytest.raises(NoRouteMatched) as caught:
        routed.decide(decision="maybe")
    assert str(caught.value) == (
        f"testapp.Routed {routed.pk}: no route of transition 'decide' in step 'open' holds "
        "for the record."
    )
    assert staff_text(caught.value) == (
        f"Routed {routed.pk}: no route of “Decide” in Open holds for the record."
    )
    assert (caught.value.step, caught.value.transition) == ("open", "decide")


def test_a_stale_record_names_the_fields_compared_and_how_to_recover():
    routed = Routed.objects.create(amount=5)
    Routed.objects.filter(pk=routed.pk).update(amount=500)
    with pytest.raises(StaleRecord) as caught:
        routed.size()
    assert set(caught.value.fields) == {"state", "amount"}
    assert str(caught.value).startswith(f"testapp.Routed {routed.pk} changed in the database")
    assert "refresh_from_db()" in str(caught.value)


# An unmet condition says so, and why -------------------------------------------------------


def test_an_unmet_when_says_the_condition_is_not_met_in_the_declared_words():
    expense = Expense.objects.create(amount=80)
    with pytest.raises(ConditionUnmet) as caught:
        expense.approve(approved_by="ann")
    error = caught.value
    assert isinstance(error, TransitionNotAllowed)  # what code catching the old error sees
    assert str(error) == (
        f"testapp.Expense {expense.pk}: transition 'approve' is not possible now. "
        "Attach the receipt first."
    )
    assert staff_text(error) == (
        f"Expense {expense.pk}: “Approve” is not possible now. Attach the receipt first."
    )
    assert error.reason == "Attach the receipt first."
    assert (error.step, error.transition) == ("submitted", "approve")
    expense.refresh_from_db()
    assert (expense.current_step, expense.approved_by) == ("submitted", "")


def test_without_unmet_a_q_condition_describes_itself():
    expense = Expense.objects.create()
    with pytest.raises(ConditionUnmet) as caught:
        expense.attach(receipt=False)  # `when` sees the accepted value
    assert caught.value.reason == "Its condition is not met: receipt = yes."


def test_a_lambda_cannot_say_more_than_that_its_condition_is_not_met():
    expense = Expense.objects.create(amount=80)
    with pytest.raises(ConditionUnmet) as caught:
        expense.fast_track()
    assert staff_text(caught.value) == (
        f"Expense {expense.pk}: “Fast track” is not possible now. Its condition is not met."
    )


def test_a_function_condition_reads_as_its_docstring_first_line_else_its_name():
    def small(expense):
        """The amount is under 50.

        Larger expenses need a manager."""
        return expense.amount < 50

    def has_receipt(expense):
        return expense.receipt

    assert unmet_reason(Transition("go", to="x", when=small), Expense) == (
        "Its condition is not met: The amount is under 50."
    )
    assert unmet_reason(Transition("go", to="x", when=has_receipt), Expense) == (
        "Its condition is not met: has receipt."
    )


def test_a_q_condition_reads_with_field_names_operators_and_values():
    when = Q(amount__gte=100) | ~Q(note="") | Q(approved_by__isnull=True, receipt=False)
    assert unmet_reason(Transition("go", to="x", when=when), Expense) == (
        "Its condition is not met: amount ≥ 100 or not (note = “”) or "
        "(approved by is empty and receipt = no)."
    )
    when = Q(amount__in=[1, 2], net_total__lt=3)  # a calculation reads as its name
    assert unmet_reason(Transition("go", to="x", when=when), Expense) == (
        "Its condition is not met: amount in 1, 2 and net total < 3."
    )


def test_unmet_text_becomes_a_sentence():
    transition = Transition("go", to="x", when=Q(receipt=True), unmet="attach the receipt")
    assert unmet_reason(transition, Expense) == "Attach the receipt."


def test_unmet_without_when_or_not_text_is_a_check_error(declare):
    class Workflow:
        start = Step(
            Transition("go", to="done", unmet="Not yet."),
            Transition("run", to="done", when=Q(n=1), unmet=5),
            Transition("fine", to="done", when=Q(n=1), unmet="Not yet."),
        )
        done = Step()

    from django.db import models

    errors = check_model(declare(Workflow, n=models.IntegerField(default=0)))
    assert [e.id for e in errors] == ["django_workflow.E032", "django_workflow.E032"]
    assert "'go'" in errors[0].msg and "no when" in errors[0].msg
    assert "'run'" in errors[1].msg and "unmet=5" in errors[1].msg


# An unsaved instance ----------------------------------------------------------------------


@pytest.mark.parametrize("model", [Decision, Order])  # an AutoField key, a UUID key set early
def test_an_unsaved_instance_is_refused_as_not_saved_and_nothing_is_written(model):
    record = model()
    name = "reject" if model is Decision else "place"
    with pytest.raises(UnsavedRecord) as caught:
        record.transition(name)
    assert isinstance(caught.value, ValueError)
    assert "is not saved" in str(caught.value) and "refresh_from_db" not in str(caught.value)
    assert caught.value.transition == name
    assert not model.objects.exists()
    assert not TransitionLog.objects.exists()


# comment and data: what the log row can store and read back -------------------------------


BAD_DATA = [
    "lone \ud800 surrogate",
    {"key": "NUL \x00 inside"},
    {"lone \udc80 key": 1},
    {1: "a key that is no text"},
    float("nan"),
    [float("inf")],
    datetime.date(2026, 1, 1),
    nested(MAX_DATA_DEPTH + 1),
    "x" * (MAX_DATA_BYTES + 1),
]


@pytest.mark.parametrize("data", BAD_DATA)
def test_data_that_cannot_be_stored_and_read_back_is_refused_before_anything_is_written(data):
    decision = Decision.objects.create()
    with pytest.raises(InvalidLogValue) as caught:
        decision.reject(data=data)
    assert isinstance(caught.value, ValueError) and caught.value.argument == "data"
    assert str(caught.value).startswith("The call's data ")
    assert Decision.objects.get(pk=decision.pk).current_step == "pending"
    assert not TransitionLog.objects.filter(transition_name="reject").exists()


@pytest.mark.parametrize("comment", [5, b"bytes", "NUL \x00", "lone \ud800"])
def test_a_comment_that_is_not_storable_text_is_refused(comment):
    decision = Decision.objects.create()
    with pytest.raises(InvalidLogValue) as caught:
        decision.reject(comment=comment)
    assert caught.value.argument == "comment"
    assert Decision.objects.get(pk=decision.pk).current_step == "pending"


def test_no_comment_and_a_lazy_translated_comment_are_text():
    decision = Decision.objects.create()
    decision.hold(comment=None)
    decision.release(comment=gettext_lazy("Budget approved"))
    rows = TransitionLog.objects.filter(transition_name__in=["hold", "release"])
    assert sorted(rows.values_list("comment", flat=True)) == ["", "Budget approved"]


def test_a_bulk_call_refuses_bad_data_before_any_record_moves():
    decisions = [Decision.objects.create() for _ in range(3)]
    with pytest.raises(InvalidLogValue):
        Decision.objects.all().transition("reject", data={"k": "\x00"})
    assert {d.current_step for d in Decision.objects.filter(pk__in=[d.pk for d in decisions])} == {
        "pending"
    }
    assert not TransitionLog.objects.filter(transition_name="reject").exists()


def test_the_deepest_and_largest_data_allowed_is_stored_and_read_back():
    deepest = nested(MAX_DATA_DEPTH)
    decision = Decision.objects.create()
    decision.hold(data=deepest, comment="Ünïcödé ✓")
    row = TransitionLog.objects.get(transition_name="hold")
    assert (row.data, row.comment) == (deepest, "Ünïcödé ✓")
    largest = "x" * (MAX_DATA_BYTES - 2)  # the two quotes make it MAX_DATA_BYTES
    decision.release(data=largest)
    assert TransitionLog.objects.get(transition_name="release").data == largest


# The admin --------------------------------------------------------------------------------


def test_a_bulk_move_reports_an_unmet_condition_as_such_not_as_not_offered(rf, admin_user):
    from django.contrib.admin.sites import AdminSite
    from django.contrib.messages import get_messages
    from django.contrib.messages.storage.cookie import CookieStorage

    from tests.testapp.admin import WorkflowAdmin

    small, large = Expense.objects.create(amount=10), Expense.objects.create(amount=80)
    request = rf.post("/")
    request.user, request._messages = admin_user, CookieStorage(rf.post("/"))
    WorkflowAdmin(Expense, AdminSite()).workflow_bulk_transition(
        request, Expense.objects.all(), "fast_track"
    )
    texts = [str(message) for message in get_messages(request)]
    assert texts[1] == f"Fast track: 1 not moved, its condition is not met: {large}."
    assert Expense.objects.get(pk=small.pk).current_step == "approved"


def test_no_route_after_an_automatic_steps_action_names_the_step_and_the_action():
    # Release 3: 'no route of “Run screening” in Screening holds': neither is in the code.
    from tests.testapp.models import Candidate

    candidate = Candidate.objects.create(name="Ada")
    error = NoRouteMatched(candidate, "run_screening", "screening")
    assert str(error) == (
        f"testapp.Candidate {candidate.pk}: no route of step 'screening' holds for the record "
        "after action 'run_screening'."
    )
    assert staff_text(error) == (
        f"Candidate {candidate.pk}: no route of Screening holds for the record after Run screening."
    )
