"""Bulk moves: ``QuerySet.transition`` and the changelist's actions (docs/transitions.md)."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.contrib.messages import get_messages
from django.db.models.signals import post_save, pre_save

from django_workflow.errors import (
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)
from django_workflow.models import TransitionLog
from django_workflow.signals import step_changed
from django_workflow.work.due_instants import next_due
from tests.moments import T
from tests.testapp.models import Expense, Proposal, Routed, Ticket

pytestmark = pytest.mark.django_db


def steps(model):
    return dict(model.objects.values_list("pk", "state"))


def tickets(*states, owner=None):
    records = [Ticket.objects.create(owner=owner) for _ in states]
    for record, state in zip(records, states, strict=True):
        Ticket._base_manager.filter(pk=record.pk).update(state=state)
    return [Ticket.objects.get(pk=record.pk) for record in records]


@pytest.fixture
def agent():
    user = User.objects.create_user("agent")
    user.user_permissions.add(
        Permission.objects.get(codename="change_ticket", content_type__app_label="testapp")
    )
    return User.objects.get(pk=user.pk)


def test_records_in_different_steps_each_go_where_their_step_sends_them(agent):
    new, working, closed = tickets("new", "working", "closed")
    outcomes = Ticket.objects.all().transition("close", actor=agent)
    assert outcomes[new.pk] == "closed" and outcomes[working.pk] == "resolved"
    assert isinstance(outcomes[closed.pk], TransitionNotAllowed)
    assert steps(Ticket) == {new.pk: "closed", working.pk: "resolved", closed.pk: "closed"}


def test_each_moved_record_gets_its_log_row_with_the_actor_and_comment(agent):
    first, second = tickets("new", "working")
    Ticket.objects.all().transition("close", actor=agent, comment="end of quarter")
    rows = TransitionLog.objects.filter(triggered_by="manual").order_by("object_id")
    assert [(r.object_id, r.from_state, r.to_state, r.actor, r.comment) for r in rows] == [
        (str(first.pk), "new", "closed", agent, "end of quarter"),
        (str(second.pk), "working", "resolved", agent, "end of quarter"),
    ]


def test_each_moved_record_gets_step_changed_and_its_save_signals(agent, committed):
    tickets("new", "new", "working")
    heard, saves = [], []

    def on_step(sender, instance, from_state, to_state, transition, actor, **kwargs):
        heard.append((instance.pk, from_state, to_state, transition, actor))

    def on_save(sender, instance, signal, update_fields=None, **kwargs):
        saves.append((signal is pre_save, instance.pk, instance.state, "state" in update_fields))

    step_changed.connect(on_step, sender=Ticket)
    pre_save.connect(on_save, sender=Ticket)
    post_save.connect(on_save, sender=Ticket)
    try:
        with committed():
            Ticket.objects.all().transition("close", actor=agent)
    finally:
        step_changed.disconnect(on_step, sender=Ticket)
        pre_save.disconnect(on_save, sender=Ticket)
        post_save.disconnect(on_save, sender=Ticket)
    expected = {pk: state for pk, state in steps(Ticket).items()}
    assert sorted(heard) == sorted(
        (pk, "working" if to == "resolved" else "new", to, "close", agent)
        for pk, to in expected.items()
    )
    assert sorted(saves) == sorted(
        (before, pk, state, True) for pk, state in expected.items() for before in (True, False)
    )


def test_a_policy_refusing_some_records_leaves_them_as_they_were():
    owner, other = User.objects.create_user("owner"), User.objects.create_user("other")
    mine, theirs = tickets("resolved", "resolved", owner=owner)
    Ticket._base_manager.filter(pk=theirs.pk).update(owner=other)
    outcomes = Ticket.objects.all().transition("reopen", actor=owner)
    assert outcomes[mine.pk] == "working"
    assert isinstance(outcomes[theirs.pk], WorkflowPermissionDenied)
    assert steps(Ticket) == {mine.pk: "working", theirs.pk: "resolved"}
    assert not TransitionLog.objects.filter(object_id=str(theirs.pk), triggered_by="manual")


def test_a_record_changed_after_it_was_read_is_reported_stale_and_not_written():
    first, second, third = tickets("new", "new", "new")

    class Meddler:
        """Grants the permission, and while asked, another process moves the second ticket."""

        asked = 0

        def has_perm(self, permission, record=None):
            self.asked += 1
            if self.asked == 2:
                Ticket._base_manager.filter(pk=second.pk).update(state="working")
            return True

    outcomes = Ticket.objects.all().transition("close", actor=Meddler())
    assert outcomes[first.pk] == outcomes[third.pk] == "closed"
    assert isinstance(outcomes[second.pk], StaleRecord)
    assert steps(Ticket) == {first.pk: "closed", second.pk: "working", third.pk: "closed"}


def test_routes_reading_a_field_group_records_by_its_value_and_guard_it():
    small, large, unsized = (Routed.objects.create(amount=a) for a in (5, 500, None))
    outcomes = Routed.objects.all().transition("size")
    assert (outcomes[small.pk], outcomes[large.pk]) == ("small", "large")
    assert isinstance(outcomes[unsized.pk], NoRouteMatched)
    assert steps(Routed) == {small.pk: "small", large.pk: "large", unsized.pk: "open"}


def test_accepted_values_are_written_with_the_step_and_decide_the_route():
    records = [Routed.objects.create() for _ in range(3)]
    outcomes = Routed.objects.all().transition("decide", decision="decline")
    assert set(outcomes.values()) == {"declined"}
    assert set(Routed.objects.values_list("decision", flat=True)) == {"decline"}
    assert len(outcomes) == len(records)


def test_an_unexpected_value_is_each_records_error_and_nothing_moves():
    record = Routed.objects.create(amount=5)
    outcomes = Routed.objects.all().transition("size", decision="approve")
    assert isinstance(outcomes[record.pk], TypeError)
    assert steps(Routed) == {record.pk: "open"}


def test_an_unknown_transition_is_refused_before_anything_is_read():
    Routed.objects.create()
    with pytest.raises(LookupError, match=r"has no transition 'fly'.*decide, size"):
        Routed.objects.all().transition("fly")


def test_a_transition_with_an_action_runs_it_per_record_and_an_error_stays_that_records():
    kept = Expense.objects.create(receipt=True)
    failing = Expense.objects.create()
    outcomes = Expense.objects.filter(pk=kept.pk).transition("approve", approved_by="ada")
    assert outcomes == {kept.pk: "approved"}
    assert Expense.objects.get(pk=kept.pk).note == "approved by ada, in submitted"
    outcomes = Expense.objects.filter(pk=failing.pk).transition("explode")
    assert isinstance(outcomes[failing.pk], RuntimeError)
    assert Expense.objects.get(pk=failing.pk).state == "submitted"
    assert Expense.objects.get(pk=failing.pk).note == ""


def test_when_guards_decide_per_record_and_from_any_step_applies():
    cheap, dear = Expense.objects.create(amount=10), Expense.objects.create(amount=90)
    outcomes = Expense.objects.all().transition("fast_track")
    assert outcomes[cheap.pk] == "approved"
    assert isinstance(outcomes[dear.pk], TransitionNotAllowed)
    outcomes = Expense.objects.all().transition("cancel")
    assert outcomes == {cheap.pk: "cancelled", dear.pk: "cancelled"}


def test_authorize_false_skips_policies_as_the_single_call_does():
    record = tickets("new")[0]
    assert Ticket.objects.all().transition("close", actor=None, authorize=False) == {
        record.pk: "closed"
    }


def test_entering_a_step_with_deadlines_stores_each_records_due_instant(clock):
    records = [Proposal.objects.create(submitted_at=T + timedelta(hours=h)) for h in (1, 2)]
    clock.move_to(T + timedelta(hours=3), tick=False)
    outcomes = Proposal.objects.all().transition("bounce")
    assert outcomes == {record.pk: "review" for record in records}
    for stored in Proposal.objects.all():
        assert stored.state_entered_at == T + timedelta(hours=3)
        assert stored.next_due_at == next_due(stored) is not None


# The changelist actions -----------------------------------------------------------------


def staff(client, *codenames):
    user = User.objects.create_user("staff", is_staff=True)
    for codename in codenames:
        user.user_permissions.add(
            Permission.objects.get(codename=codename, content_type__app_label="testapp")
        )
    client.force_login(user)
    return user


def run_action(client, name, records, **more):
    return client.post(
        "/admin/testapp/ticket/",
        {"action": f"workflow_{name}", "_selected_action": [r.pk for r in records], **more},
        follow=True,
    )


def test_the_changelist_offers_one_action_per_transition_to_users_who_may_change(client):
    staff(client, "view_ticket", "change_ticket")
    page = client.get("/admin/testapp/ticket/")
    offered = dict(page.context["action_form"].fields["action"].choices)
    assert offered["workflow_close"] == "Close: selected tickets"
    assert offered["workflow_reopen"] == "Reopen: selected tickets"


def test_view_only_staff_get_no_transition_actions_and_cannot_post_one(client):
    staff(client, "view_ticket")
    record = tickets("new")[0]
    form = client.get("/admin/testapp/ticket/").context["action_form"]
    offered = dict(form.fields["action"].choices) if form is not None else {}
    assert not [key for key in offered if key.startswith("workflow_")]
    run_action(client, "close", [record])
    assert Ticket.objects.get(pk=record.pk).state == "new"
    assert not TransitionLog.objects.filter(triggered_by="manual").exists()


def test_an_action_moves_the_selection_and_says_what_became_of_each(client):
    staff(client, "view_ticket", "change_ticket")
    new, working, closed = tickets("new", "working", "closed")
    response = run_action(client, "close", [new, working, closed], post="yes")  # confirmed
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert "Close: 2 moved (1 to Closed, 1 to Resolved)." in said
    assert f"Close: 1 not moved, not offered in its step: {closed}." in said
    assert steps(Ticket) == {new.pk: "closed", working.pk: "resolved", closed.pk: "closed"}
    assert TransitionLog.objects.filter(triggered_by="manual").count() == 2


def test_records_whose_admin_hides_the_transition_are_left_and_named(rf, agent):
    from django.contrib import admin
    from django.contrib.admin.sites import AdminSite
    from django.contrib.messages.storage.fallback import FallbackStorage

    from django_workflow.admin import WorkflowAdminMixin

    class NoClosingWorkAdmin(WorkflowAdminMixin, admin.ModelAdmin):
        def get_workflow_transitions(self, request, record):
            offered = super().get_workflow_transitions(request, record)
            return [n for n in offered if not (n == "close" and record.state == "working")]

    new, working = tickets("new", "working")
    request = rf.post("/")
    request.user, request.session = agent, {}
    request._messages = FallbackStorage(request)
    model_admin = NoClosingWorkAdmin(Ticket, AdminSite())
    model_admin.workflow_bulk_transition(request, Ticket.objects.all(), "close")
    assert steps(Ticket) == {new.pk: "closed", working.pk: "working"}
    assert [str(m) for m in request._messages] == [
        "Close: 1 moved (1 to Closed).",
        f"Close: 1 not moved, not offered here: {working}.",
    ]


def test_a_bulk_move_into_a_final_step_is_confirmed_on_a_page_first(client):
    staff(client, "view_ticket", "change_ticket")
    new, working, closed = tickets("new", "working", "closed")
    page = run_action(client, "close", [new, working, closed])
    assert page.templates[0].name == "admin/django_workflow/bulk_confirmation.html"
    assert {(m["record"], m["to"], m["final"]) for m in page.context["moving"]} == {
        (new, "Closed", True),
        (working, "Resolved", False),
    }
    assert [(s["record"], s["reason"]) for s in page.context["staying"]] == [
        (closed, "not offered in its step")
    ]
    html = page.content.decode()
    assert '<input type="hidden" name="post" value="yes">' in html
    assert 'name="workflow-comment"' in html and 'class="workflow-back">Back</a>' in html
    assert steps(Ticket) == {new.pk: "new", working.pk: "working", closed.pk: "closed"}
    response = run_action(
        client, "close", [new, working, closed], post="yes", **{"workflow-comment": "spam"}
    )
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert "Close: 2 moved (1 to Closed, 1 to Resolved)." in said
    assert steps(Ticket) == {new.pk: "closed", working.pk: "resolved", closed.pk: "closed"}
    assert set(TransitionLog.objects.filter(triggered_by="manual").values_list("comment")) == {
        ("spam",)
    }


def test_a_bulk_move_into_no_final_step_moves_at_once(client):
    staff(client, "view_ticket", "change_ticket")
    [working] = tickets("working")
    response = run_action(client, "close", [working])  # close from working: to resolved
    assert "Close: 1 moved (1 to Resolved)." in [
        str(m) for m in get_messages(response.wsgi_request)
    ]
    assert steps(Ticket) == {working.pk: "resolved"}


def test_a_bulk_comment_that_cannot_be_kept_is_asked_again_and_nothing_moves(client):
    staff(client, "view_ticket", "change_ticket")
    new, working = tickets("new", "working")
    page = run_action(client, "close", [new, working], post="yes", **{"workflow-comment": "x\x00"})
    assert page.templates[0].name == "admin/django_workflow/bulk_confirmation.html"
    assert "Null characters are not allowed." in page.content.decode()
    assert steps(Ticket) == {new.pk: "new", working.pk: "working"}


def test_a_confirmed_bulk_move_names_the_records_that_moved_meanwhile(client):
    staff(client, "view_ticket", "change_ticket")
    first, second = tickets("new", "new")
    page = run_action(client, "close", [first, second])
    assert len(page.context["moving"]) == 2
    Ticket._base_manager.filter(pk=second.pk).update(state="closed")  # someone was quicker
    response = run_action(client, "close", [first, second], post="yes")
    assert response.status_code == 200
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert said == [
        "Close: 1 moved (1 to Closed).",
        f"Close: 1 not moved, not offered in its step: {second}.",
    ]


def test_the_confirmation_says_when_a_records_condition_is_not_met():
    from django_workflow.admin.actions import foresee
    from tests.testapp.models import Expense

    cheap, dear = Expense.objects.create(amount=10), Expense.objects.create(amount=100)
    assert foresee(cheap, "fast_track", None) == ("approved", "")
    assert foresee(dear, "fast_track", None) == (None, "its condition is not met")
    assert foresee(Expense.objects.create(), "pay", None) == (None, "not offered in its step")


def test_a_move_refused_on_a_claim_step_says_who_holds_the_record_or_to_claim_it():
    # Release 3 said only "not permitted", to a superuser too.
    from django_workflow.admin.actions import foresee
    from tests.testapp.models import Errand

    boss = User.objects.create_superuser("boss", "boss@example.com", "pw")
    ann = User.objects.create_user("ann")
    unheld, held = Errand.objects.create(), Errand.objects.create()
    for errand in (unheld, held):
        errand.start(actor=boss)
    held.workflow.claim(ann)
    assert foresee(unheld, "finish", boss) == (None, "nobody holds it: claim it first")
    assert foresee(held, "finish", boss) == (None, "ann holds it")


def test_staff_whom_every_policy_of_a_transition_refuses_are_not_offered_its_action(
    client, settings
):
    # Only Django's ModelBackend: no object permission can grant what the user lacks.
    settings.AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]
    user = User.objects.create_user("recruiter", is_staff=True)
    for codename in ("view_candidate", "change_candidate", "screen_candidate"):
        user.user_permissions.add(
            Permission.objects.get(codename=codename, content_type__app_label="hiring")
        )
    client.force_login(user)
    offered = dict(
        client.get("/admin/hiring/candidate/").context["action_form"].fields["action"].choices
    )
    assert "workflow_rescreen" in offered  # the recruiters' policy lets them
    assert "workflow_make_offer" not in offered  # only hiring managers may, on any record
    user.user_permissions.add(Permission.objects.get(codename="decide_candidate"))
    client.force_login(User.objects.get(pk=user.pk))
    offered = dict(
        client.get("/admin/hiring/candidate/").context["action_form"].fields["action"].choices
    )
    assert offered["workflow_make_offer"] == "Make an offer: selected candidates"
