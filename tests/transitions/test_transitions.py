"""Manual transitions: docs/transitions.md."""

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Permission, User

from django_workflow import (
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)
from django_workflow.signals import step_changed
from tests.testapp.models import Article, Candidate, Order, Routed, Ticket

pytestmark = pytest.mark.django_db


@pytest.fixture
def interviewing(committed):
    with committed():
        candidate = Candidate.objects.create(name="Ada", resume_words=700)
    candidate.refresh_from_db()
    assert candidate.state == "interview"
    return candidate


def row(record):
    return type(record).objects.get(pk=record.pk)


def test_a_transition_moves_the_record_and_its_row(interviewing, recruiter):
    before = interviewing.state_entered_at
    interviewing.approve(actor=recruiter)
    assert interviewing.state == "offer"
    assert interviewing.state_entered_at > before
    stored = row(interviewing)
    assert (stored.state, stored.state_entered_at) == ("offer", interviewing.state_entered_at)


def test_the_generic_call_is_the_same_as_the_method(interviewing, recruiter):
    interviewing.transition("reject", actor=recruiter)
    assert row(interviewing).state == "rejected"


def test_a_transition_the_step_does_not_offer_is_not_allowed(interviewing, recruiter):
    with pytest.raises(TransitionNotAllowed) as caught:
        interviewing.transition("retry_payment", actor=recruiter)
    assert str(caught.value) == (
        f"testapp.Candidate {interviewing.pk}: step 'interview' offers no transition "
        "'retry_payment'."
    )
    assert (caught.value.step, caught.value.transition) == ("interview", "retry_payment")
    assert row(interviewing).state == "interview"


def test_a_repeated_call_after_the_record_moved_on_is_not_allowed(interviewing, recruiter):
    interviewing.reject(actor=recruiter)
    with pytest.raises(TransitionNotAllowed):
        interviewing.reject(actor=recruiter)


def test_a_stale_instance_changes_nothing(interviewing, recruiter):
    other = row(interviewing)
    other.reject(actor=recruiter)
    with pytest.raises(StaleRecord):
        interviewing.approve(actor=recruiter)
    stored = row(interviewing)
    assert (stored.state, stored.state_entered_at) == ("rejected", other.state_entered_at)


def test_an_accepted_field_changed_underneath_is_the_callers_to_set(interviewing, recruiter):
    Candidate.objects.filter(pk=interviewing.pk).update(priority="urgent")
    interviewing.triage(actor=recruiter, priority="normal")
    stored = row(interviewing)
    assert (stored.state, stored.priority) == ("offer", "normal")


def test_a_route_read_field_changed_underneath_is_stale(db):
    routed = Routed.objects.create(amount=5)
    Routed.objects.filter(pk=routed.pk).update(amount=500)
    with pytest.raises(StaleRecord) as caught:
        routed.size()
    assert set(caught.value.fields) == {"state", "amount"}
    assert row(routed).state == "open"


def test_routes_see_the_instance_plus_the_accepted_values(interviewing, recruiter):
    interviewing.triage(actor=recruiter, priority="urgent")
    stored = row(interviewing)
    assert (stored.state, stored.priority) == ("fast_track", "urgent")


def test_routes_are_tried_in_order(db):
    assert Routed.objects.create(amount=500).size().state == "large"
    assert Routed.objects.create(amount=5).size().state == "small"


def test_callable_routes_receive_the_record(db):
    record = Routed.objects.create(amount=7)
    record.size()
    assert row(record).state == "small"


def test_no_route_matched_changes_nothing(interviewing, recruiter):
    record = Routed.objects.create(amount=None)
    entered = record.state_entered_at
    with pytest.raises(NoRouteMatched):
        record.size()
    stored = row(record)
    assert (stored.state, stored.state_entered_at) == ("open", entered)
    with pytest.raises(NoRouteMatched):
        interviewing.triage(actor=recruiter, priority="low")
    assert row(interviewing).priority == "normal"


def test_a_null_value_does_not_satisfy_a_comparison(db):
    with pytest.raises(NoRouteMatched):
        Routed.objects.create(amount=None).transition("size")


def test_accepted_values_are_written_with_the_step(db):
    record = Routed.objects.create()
    record.decide(decision="approve")
    stored = row(record)
    assert (stored.state, stored.decision) == ("approved", "approve")


def test_values_a_transition_does_not_accept_are_refused(db):
    record = Routed.objects.create()
    with pytest.raises(TypeError, match="amount"):
        record.decide(decision="approve", amount=3)
    assert row(record).state == "open"


def test_a_policy_refuses_the_wrong_actor_and_changes_nothing(interviewing, outsider):
    with pytest.raises(WorkflowPermissionDenied):
        interviewing.approve(actor=outsider)
    with pytest.raises(WorkflowPermissionDenied):
        interviewing.approve()
    assert row(interviewing).state == "interview"


def test_permission_denied_is_djangos(interviewing, outsider):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        interviewing.reject(actor=outsider)


def test_authorize_false_skips_the_policy(interviewing):
    interviewing.reject(authorize=False)
    assert row(interviewing).state == "rejected"


def test_workflow_policies_win_over_the_step_policy(committed, recruiter):
    staff = SimpleNamespace(role="recruiter", is_staff=False)
    with committed():
        candidate = Candidate.objects.create(resume_words=700)
    candidate.refresh_from_db()
    candidate.triage(actor=staff, priority="urgent")
    # fast_track's step policy is is_staff, but Workflow.policies says recruiters approve.
    candidate.approve(actor=staff)
    assert row(candidate).state == "offer"


def test_a_shared_name_acts_on_the_current_step(db):
    boss = User.objects.create_user("boss")
    boss.user_permissions.add(
        Permission.objects.get(codename="change_ticket", content_type__app_label="testapp")
    )
    boss = User.objects.get(pk=boss.pk)
    closed_early = Ticket.objects.create()
    closed_early.close(actor=boss)
    worked = Ticket.objects.create()
    worked.start(actor=boss)
    worked.close(actor=boss)
    assert (row(closed_early).state, row(worked).state) == ("closed", "resolved")


def test_has_perm_policy_refuses_users_without_the_permission(db):
    ticket = Ticket.objects.create()
    with pytest.raises(WorkflowPermissionDenied):
        ticket.close(actor=User.objects.create_user("nobody"))


def test_relates_to_actor_via_allows_only_the_related_user(db):
    owner, stranger = User.objects.create_user("owner"), User.objects.create_user("stranger")
    ticket = Ticket.objects.create(owner=owner)
    Ticket.objects.filter(pk=ticket.pk).update(state="resolved")
    ticket.refresh_from_db()
    with pytest.raises(WorkflowPermissionDenied):
        ticket.reopen(actor=stranger)
    ticket.reopen(actor=owner)
    assert row(ticket).state == "working"


def test_a_self_loop_resets_state_entered_at(interviewing, recruiter):
    before = interviewing.state_entered_at
    interviewing.hold(actor=recruiter)
    assert row(interviewing).state == "interview"
    assert row(interviewing).state_entered_at > before


def test_a_renamed_state_field_and_uuid_key_work(db):
    order = Order.objects.create()
    assert order.status == "draft" and order.current_step == "draft"
    order.place()
    assert row(order).status in {"charge", "shipped"}


def test_a_user_declared_state_field_is_used(db):
    article = Article.objects.create()
    assert article.state == "draft"
    article.publish()
    article.publish()  # a self-loop on the next step
    assert row(article).state == "published"


def test_available_actions_follow_the_policy(interviewing, recruiter, outsider):
    assert interviewing.available_actions(recruiter) == [
        "approve",
        "reject",
        "triage",
        "rescreen",
        "hold",
    ]
    assert interviewing.available_actions(outsider) == []
    assert Routed.objects.create().available_actions() == ["decide", "size"]


def test_available_actions_are_empty_for_automatic_and_terminal_steps(db):
    assert Order(status="charge").available_actions() == []
    assert Order(status="shipped").available_actions() == []


def test_step_changed_is_sent_after_commit(interviewing, recruiter, committed):
    received = []

    def listener(sender, **kwargs):
        received.append((sender, kwargs))

    step_changed.connect(listener)
    try:
        with committed():
            interviewing.reject(actor=recruiter)
            assert received == []
    finally:
        step_changed.disconnect(listener)
    [(sender, kwargs)] = received
    assert sender is Candidate
    assert kwargs["instance"] is interviewing
    assert (kwargs["from_state"], kwargs["to_state"]) == ("interview", "rejected")
    assert (kwargs["transition"], kwargs["trigger"], kwargs["actor"]) == (
        "reject",
        "manual",
        recruiter,
    )


def test_no_signal_is_sent_when_a_call_fails(interviewing, outsider, committed):
    received = []
    step_changed.connect(received.append)
    try:
        with committed(), pytest.raises(WorkflowPermissionDenied):
            interviewing.reject(actor=outsider)
    finally:
        step_changed.disconnect(received.append)
    assert received == []
