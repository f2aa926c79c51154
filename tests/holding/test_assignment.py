"""Who holds the work (docs/holding-work.md): ``Workflow.assignment = True`` gives records a
holder; ``Step(claim=True)`` lets only the holder (or whoever stands in for them) call the
step's transitions; claims, releases and assignments are logged with trigger ``assignment``."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_workflow import (
    AlreadyClaimed,
    StaleRecord,
    Step,
    Transition,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)
from django_workflow.checks import check_model
from django_workflow.models import Absence, TransitionLog
from tests.helpers import fresh
from tests.testapp.models import Errand, Ticket

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return User.objects.create_user("alice")


@pytest.fixture
def bob():
    return User.objects.create_user("bob")


@pytest.fixture
def lead():
    """Holds the model's change permission: the default ``assign`` policy."""
    user = User.objects.create_user("lead")
    user.user_permissions.add(Permission.objects.get(codename="change_errand"))
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


@pytest.fixture
def working():
    return Errand.objects.create(title="Fix the gate").start()


def assignment_rows(errand):
    rows = TransitionLog.objects.filter(object_id=str(errand.pk), triggered_by="assignment")
    return list(rows.values_list("transition_name", "actor_repr", "data"))


def test_assignment_generates_a_nullable_holder_and_its_instant():
    assignee = Errand._meta.get_field("assignee")
    assert assignee.null and assignee.related_model is User
    assert assignee.remote_field.related_name == "+"  # no reverse name to clash across models
    assert Errand._meta.get_field("assigned_at").null
    assert not any(f.name == "assignee" for f in Ticket._meta.get_fields())


def test_claiming_makes_the_actor_the_holder_and_is_logged(working, alice):
    working.claim(alice)
    stored = fresh(working)
    assert stored.assignee == alice and stored.assigned_at is not None
    assert working.assignee_id == alice.pk
    assert assignment_rows(working) == [
        ("claim", "alice", {"assignee": alice.pk, "assignee_name": "alice"})
    ]


def test_a_held_record_cannot_be_claimed_again(working, alice, bob):
    working.claim(alice)
    with pytest.raises(AlreadyClaimed, match="alice holds it") as raised:
        fresh(working).claim(bob)
    assert raised.value.holder == alice
    assert isinstance(raised.value, TransitionNotAllowed)
    assert fresh(working).assignee == alice and len(assignment_rows(working)) == 1


def test_only_the_holder_calls_a_claim_steps_transitions(working, alice, bob):
    with pytest.raises(WorkflowPermissionDenied, match="nobody holds it; claim it first"):
        working.finish(actor=alice)
    working.claim(alice)
    with pytest.raises(WorkflowPermissionDenied, match="alice holds it") as raised:
        fresh(working).finish(actor=bob)
    assert raised.value.holder == alice
    assert fresh(working).available_actions(bob) == []
    assert fresh(working).available_actions(alice) == ["finish", "note", "hand_back"]
    fresh(working).finish(actor=alice)
    assert fresh(working).state == "review"


def test_leaving_the_step_clears_the_holder_in_the_moves_own_update(working, alice):
    working.claim(alice)
    errand = fresh(working)
    with CaptureQueriesContext(connection) as queries:
        errand.hand_back(actor=alice)
    # On PostgreSQL the log row's INSERT rides in a WITH of the same statement.
    updates = [q["sql"] for q in queries.captured_queries if "UPDATE " in q["sql"]]
    assert len(updates) == 1 and '"assignee_id" = ' in updates[0].split(" WHERE ")[0]
    stored = fresh(working)
    assert (stored.state, stored.assignee, stored.assigned_at) == ("open", None, None)
    assert (errand.assignee_id, errand.assigned_at) == (None, None)


def test_a_self_loop_keeps_the_holder(working, alice):
    working.claim(alice)
    fresh(working).note(actor=alice)
    assert fresh(working).assignee == alice


def test_a_step_without_claim_can_be_held_and_its_holder_is_cleared_on_leaving(alice, bob):
    errand = Errand.objects.create()
    errand.claim(alice)
    fresh(errand).start(actor=bob)  # open is no claim step: anyone may start it
    assert fresh(errand).assignee is None


def test_a_stale_instance_decided_for_a_former_holder_changes_nothing(working, alice, bob, lead):
    working.claim(alice)
    seen_by_alice = fresh(working)
    fresh(working).assign(bob, actor=lead)
    with pytest.raises(StaleRecord):
        seen_by_alice.finish(actor=alice)
    assert fresh(working).state == "working" and fresh(working).assignee == bob


def test_the_holder_releases(working, alice):
    working.claim(alice)
    fresh(working).release(alice)
    assert fresh(working).assignee is None
    assert assignment_rows(working)[-1] == (
        "release",
        "alice",
        {"assignee": None, "released": "alice"},
    )


def test_someone_else_may_not_release_a_held_record(working, alice, bob):
    working.claim(alice)
    with pytest.raises(WorkflowPermissionDenied, match="alice holds it"):
        fresh(working).release(bob)
    assert fresh(working).assignee == alice


def test_releasing_an_unheld_record_is_refused(working, alice):
    with pytest.raises(TransitionNotAllowed, match="nobody holds it"):
        working.release(alice)
    assert assignment_rows(working) == []


def test_assigning_needs_the_change_permission_by_default(working, alice, bob, lead):
    with pytest.raises(WorkflowPermissionDenied):
        working.assign(bob, actor=alice)
    working.assign(bob, actor=lead)
    assert fresh(working).assignee == bob
    working.assign(alice, actor=lead)  # reassigning needs no release first
    assert fresh(working).assignee == alice
    assert [row[0] for row in assignment_rows(working)] == ["assign", "assign"]
    assert assignment_rows(working)[-1][2] == {"assignee": alice.pk, "assignee_name": "alice"}


def test_assigning_nobody_lets_go(working, alice, lead):
    working.claim(alice)
    fresh(working).assign(None, actor=lead)
    assert fresh(working).assignee is None


def test_someone_with_the_assign_permission_may_release_anothers_claim(working, alice, lead):
    working.claim(alice)
    fresh(working).release(lead)
    assert fresh(working).assignee is None


def test_a_claim_needs_the_steps_policy(alice):
    reviewing = Errand.objects.create()
    reviewing.start(actor=alice)
    reviewing.claim(alice)
    reviewing = fresh(reviewing)
    reviewing.finish(actor=alice)
    with pytest.raises(WorkflowPermissionDenied):
        fresh(reviewing).claim(alice)  # review is for staff
    staff = User.objects.create_user("sam", is_staff=True)
    fresh(reviewing).claim(staff)
    fresh(reviewing).approve(actor=staff)
    assert fresh(reviewing).state == "done"


def test_an_anonymous_claim_is_refused(working):
    with pytest.raises(WorkflowPermissionDenied):
        working.claim(None)
    with pytest.raises(WorkflowPermissionDenied):
        working.claim("the cron job")


def test_nobody_holds_a_record_in_a_terminal_step(alice):
    errand = Errand.objects.create()
    errand.drop(actor=alice)
    with pytest.raises(TransitionNotAllowed, match="nobody holds a record"):
        fresh(errand).claim(alice)


def test_authorize_false_skips_the_holder_rule_for_trusted_code(working, alice):
    working.claim(alice)
    fresh(working).finish(authorize=False)
    assert fresh(working).state == "review"


def test_save_leaves_the_holder_to_the_engine(working, alice, bob):
    working.claim(alice)
    errand = fresh(working)
    errand.assignee = bob
    errand.title = "Fix the north gate"
    errand.save()
    stored = fresh(working)
    assert (stored.title, stored.assignee) == ("Fix the north gate", alice)


def test_a_delegate_acts_for_an_absent_holder_and_the_log_says_for_whom(working, alice, bob):
    working.claim(alice)
    now = timezone.now()
    Absence.objects.create(
        user=alice,
        delegate=bob,
        starts_at=now - timedelta(hours=1),
        ends_at=now + timedelta(days=1),
    )
    assert fresh(working).available_actions(bob) == ["finish", "note", "hand_back"]
    fresh(working).finish(actor=bob)
    row = TransitionLog.objects.get(object_id=str(working.pk), transition_name="finish")
    assert (row.actor, row.on_behalf_of) == (bob, alice)


def test_a_delegate_releases_for_the_holder(working, alice, bob):
    working.claim(alice)
    now = timezone.now()
    Absence.objects.create(user=alice, delegate=bob, starts_at=now, ends_at=now + timedelta(days=1))
    fresh(working).release(bob)
    row = TransitionLog.objects.filter(transition_name="release").get()
    assert (row.actor, row.on_behalf_of) == (bob, alice)


def test_an_absence_over_or_not_yet_begun_lends_nothing(working, alice, bob):
    working.claim(alice)
    now = timezone.now()
    Absence.objects.create(
        user=alice, delegate=bob, starts_at=now - timedelta(days=3), ends_at=now - timedelta(days=1)
    )
    Absence.objects.create(
        user=alice, delegate=bob, starts_at=now + timedelta(days=1), ends_at=now + timedelta(days=3)
    )
    with pytest.raises(WorkflowPermissionDenied, match="alice holds it"):
        fresh(working).finish(actor=bob)


def test_an_absence_ends_after_it_starts_and_names_someone_else(alice, bob):
    from django.core.exceptions import ValidationError

    now = timezone.now()
    with pytest.raises(ValidationError) as raised:
        Absence(user=alice, delegate=alice, starts_at=now, ends_at=now).full_clean()
    assert set(raised.value.message_dict) == {"ends_at", "delegate"}


def test_claiming_on_a_model_without_assignment_says_how_to_turn_it_on(alice):
    from django_workflow.engine import claims

    ticket = Ticket.objects.create()
    assert not hasattr(ticket, "claim")
    with pytest.raises(TransitionNotAllowed, match="declare assignment = True"):
        claims.claim(ticket, alice)


def test_the_user_model_setting_is_the_holders_model():
    assert (
        Errand._meta.get_field("assignee").remote_field.model._meta.label
        == settings.AUTH_USER_MODEL
    )


# The checks -----------------------------------------------------------------------


def ids(model):
    return [message.id.split(".")[1] for message in check_model(model)]


def test_claim_without_assignment_is_an_error(declare):
    class Workflow:
        start = Step(Transition("finish", to="done"), claim=True)
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E063" and "assignment = True" in error.hint


def test_claim_on_a_step_without_transitions_is_an_error(declare):
    class Workflow:
        assignment = True
        start = Step(Transition("finish", to="waiting"))
        waiting = Step(claim=True)

    assert "E063" in ids(declare(Workflow))


@pytest.mark.parametrize("value", ["soon", "0m", (2, "fortnights")])
def test_release_after_must_be_a_positive_duration(declare, value):
    class Workflow:
        assignment = True
        start = Step(Transition("finish", to="done"), claim=True, release_after=value)
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E064" and "duration" in error.hint


def test_release_after_without_claim_is_an_error(declare):
    class Workflow:
        assignment = True
        start = Step(Transition("finish", to="done"), release_after="1d")
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E064" and "claim=True" in error.hint


def test_the_assign_policy_needs_assignment(declare):
    class Workflow:
        policies = {"assign": lambda actor, record, name: True}
        start = Step(Transition("finish", to="done"))
        done = Step()

    assert ids(declare(Workflow)) == ["E065"]
    Workflow.assignment = True
    assert ids(declare(Workflow)) == []


def test_a_policy_naming_neither_a_transition_nor_assign_is_still_an_error(declare):
    class Workflow:
        assignment = True
        policies = {"asign": lambda actor, record, name: True}
        start = Step(Transition("finish", to="done"))
        done = Step()

    assert ids(declare(Workflow)) == ["E021"]


def test_a_transition_named_like_a_holder_call_takes_the_name(declare):
    # Release 3 refused it (E066); the call stays reachable as record.workflow.assign.
    class Workflow:
        assignment = True
        start = Step(Transition("assign", to="done"))
        done = Step()

    model = declare(Workflow)
    assert check_model(model) == []
    assert model.assign.__doc__ == "Run the 'assign' transition from the current step."
    assert model.claim.__name__ == "claim"


def test_a_claim_that_is_not_true_or_false_is_an_error(declare):
    class Workflow:
        assignment = True
        start = Step(Transition("finish", to="done"), claim="yes")
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E063" and "'yes'" in error.msg


def test_a_bulk_move_by_a_delegate_names_each_records_holder(alice, bob):
    carol = User.objects.create_user("carol")
    now = timezone.now()
    for absent in (alice, bob):
        Absence.objects.create(
            user=absent, delegate=carol, starts_at=now, ends_at=now + timedelta(days=1)
        )
    errands = [Errand.objects.create().start().claim(holder) for holder in (alice, bob, alice)]
    unheld = Errand.objects.create().start()
    outcomes = Errand.objects.filter(state="working").transition("finish", actor=carol)
    assert [outcomes[e.pk] for e in errands] == ["review"] * 3
    assert isinstance(outcomes[unheld.pk], WorkflowPermissionDenied)
    rows = {row.object_id: row for row in TransitionLog.objects.filter(transition_name="finish")}
    assert [(rows[str(e.pk)].actor, rows[str(e.pk)].on_behalf_of) for e in errands] == [
        (carol, alice),
        (carol, bob),
        (carol, alice),
    ]


def test_releasing_what_nobody_holds_says_so_to_developers_and_to_staff():
    from django_workflow.errors import staff_text
    from tests.testapp.models import Errand

    errand = Errand.objects.create(title="free").start()
    with pytest.raises(TransitionNotAllowed) as refused:
        errand.workflow.release(User.objects.create_user("ann"))
    assert str(refused.value) == f"testapp.Errand {errand.pk}: nobody holds it."
    assert staff_text(refused.value) == f"Errand {errand.pk}: nobody holds it."
