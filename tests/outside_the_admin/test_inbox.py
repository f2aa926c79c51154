"""``django_workflow.inbox(actor)`` and the admin's "My work" page: what is waiting for
a person across every workflow model, soonest deadline first (docs/work-queues.md)."""

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.db import models

from django_workflow import Step, Transition, inbox
from django_workflow.admin import WorkflowAdminMixin
from django_workflow.checks import check_model
from django_workflow.policies import EVERYTHING, any_of, is_staff, relates_to_actor_via
from tests.testapp.models import Case, Claim, Escalation, Proposal, Ticket

pytestmark = pytest.mark.django_db

ZAGREB = ZoneInfo("Europe/Zagreb")
WEDNESDAY = datetime(2026, 12, 23, 10, 0, tzinfo=ZAGREB)
MY_WORK = "/admin/django_workflow/workflowoverview/mine/"
OVERVIEW = "/admin/django_workflow/workflowoverview/"


def user_with(username, *codenames, **fields):
    user = User.objects.create_user(username, password="pw", **fields)
    for codename in codenames:
        user.user_permissions.add(
            Permission.objects.get(codename=codename, content_type__app_label="testapp")
        )
    return User.objects.get(pk=user.pk)


@pytest.fixture
def clerk():
    """May change tickets (so act on new ones) and claims, and view proposals."""
    return user_with("clerk", "change_ticket", "change_claim", "view_proposal", is_staff=True)


@pytest.fixture
def waiting(time_machine, clerk):
    """Records entered at different moments, with deadlines in different calendars."""
    time_machine.move_to(WEDNESDAY, tick=False)
    claim = Claim.objects.create()  # 3 business days past two holidays: Tue 29th 10:00 Zagreb
    time_machine.move_to(WEDNESDAY + timedelta(days=2), tick=False)
    escalation = Escalation.objects.create()  # 1 day: Sat 26th 10:00 Zagreb
    proposal = Proposal.objects.create()  # reminder after 2 days: Sun 27th 10:00 Zagreb
    ticket = Ticket.objects.create()  # no deadline
    theirs = Ticket.objects.create(owner=User.objects.create_user("someone"))
    Ticket.objects.filter(pk=theirs.pk).update(state="resolved")  # only its owner reopens
    return {"claim": claim, "escalation": escalation, "proposal": proposal, "ticket": ticket}


def test_the_inbox_lists_soonest_deadline_first_across_models_and_undated_last(waiting, clerk):
    items = inbox(clerk)
    assert [item.record for item in items] == [
        waiting["escalation"],
        waiting["proposal"],
        waiting["claim"],
        waiting["ticket"],
    ]
    assert [item.due_at for item in items] == [
        datetime(2026, 12, 26, 10, 0, tzinfo=ZAGREB),
        datetime(2026, 12, 27, 10, 0, tzinfo=ZAGREB),
        datetime(2026, 12, 29, 10, 0, tzinfo=ZAGREB),  # Thu 24th, Mon 28th, Tue 29th
        None,
    ]
    for item in items:
        pending = item.record.pending_deadlines()
        assert item.due_at == (pending[0].due_at if pending else None)


def test_an_item_says_model_step_and_what_the_actor_may_do(waiting, clerk):
    ticket = next(item for item in inbox(clerk) if item.model is Ticket)
    assert (ticket.step, ticket.step_label, ticket.actions) == ("new", "New", ("close", "start"))
    assert ticket.overdue is False and ticket.due_at is None


def test_overdue_is_judged_against_now(waiting, clerk):
    later = datetime(2026, 12, 28, 9, 0, tzinfo=ZAGREB)
    assert [item.overdue for item in inbox(clerk, now=later)] == [True, True, False, False]


def test_records_the_actor_cannot_act_on_are_left_out(waiting):
    outsider = user_with("outsider")  # no change_ticket: new tickets are not theirs to move
    assert [item.model for item in inbox(outsider)] == [Escalation, Proposal, Claim]
    assert inbox(None)[0].record == waiting["escalation"]  # no policy: anyone, even nobody


def test_limit_keeps_the_soonest(waiting, clerk):
    assert [item.record for item in inbox(clerk, limit=2)] == [
        waiting["escalation"],
        waiting["proposal"],
    ]
    assert [i.model for i in inbox(clerk, limit=1, models=[Ticket, Claim])] == [Claim]


@pytest.mark.parametrize("limit", [0, -1, "3", 2.5, True, None])
def test_a_bad_limit_is_refused(limit):
    with pytest.raises(ValueError, match="must be a positive integer"):
        inbox(None, limit=limit)


def test_the_inbox_reads_one_query_per_model_and_asks_only_the_kept_items(
    waiting, clerk, django_assert_max_num_queries
):
    from django_workflow.workflow_model import workflow_models

    models_ = workflow_models()
    # per model one query (Case's custom policy: one more); then each kept item's actions
    with django_assert_max_num_queries(len(models_) + 1 + 4 * 2):
        assert len(inbox(clerk, limit=4)) == 4


def test_a_case_reaches_its_owner_through_its_policy(clerk):
    mine = Case.objects.create(owner=clerk)
    Case.objects.filter(pk=mine.pk).update(state="working")
    Case.objects.create(owner=User.objects.create_user("other"))
    [item] = inbox(clerk, models=[Case])
    assert (item.record, item.actions) == (mine, ("resolve", "submit", "withdraw"))


def promises_more(actor, record, name):
    """A policy whose filter says more than its call: only a ticket reopened before
    may be reopened, though ``q`` says every one."""
    return record.reopened > 0


promises_more.q = lambda actor: EVERYTHING


def test_a_record_with_no_action_after_all_is_passed_over_and_the_limit_still_met(monkeypatch):
    monkeypatch.setitem(Ticket.workflow.policies, "reopen", promises_more)
    first, second, third = (Ticket.objects.create(reopened=n) for n in (0, 0, 1))
    Ticket.objects.update(state="resolved")
    assert list(Ticket.objects.actionable_by(None)) == [first, second, third]
    [item] = inbox(None, limit=1, models=[Ticket])  # a page of one at a time: three read
    assert (item.record, item.actions) == (third, ("reopen",))


# The admin's "My work" page ---------------------------------------------------------------


def test_my_work_lists_the_users_records_in_the_models_they_may_change(waiting, clerk, client):
    client.force_login(clerk)
    page = client.get(MY_WORK)
    assert page.status_code == 200
    rows = page.context["rows"]
    # Proposals wait for the clerk too, but the clerk may only view them; Escalation is
    # not registered in the test admin
    assert [row["item"].record for row in rows] == [waiting["claim"], waiting["ticket"]]
    claim = waiting["claim"]
    assert rows[0]["url"] == f"/admin/testapp/claim/{claim.pk}/change/"
    html = page.content.decode()
    assert f'href="/admin/testapp/claim/{claim.pk}/change/"' in html
    assert "Reminder due Tue 29 Dec 09:00 (in 4 d)" in html  # in the site's zone, UTC
    assert (
        '<span class="workflow-my-work-action" data-transition="close">Close</span>, '
        '<span class="workflow-my-work-action" data-transition="start">Start</span>'
    ) in html


class OwnTicketsAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    """Shows no ticket reopened 9 times, lets a user change only tickets nobody else
    owns, and never offers "close"."""

    def get_queryset(self, request):
        return super().get_queryset(request).exclude(reopened=9)

    def has_change_permission(self, request, obj=None):
        mine = obj is None or obj.owner_id in (None, request.user.pk)
        return mine and super().has_change_permission(request, obj)

    def get_workflow_transitions(self, request, record):
        return [n for n in super().get_workflow_transitions(request, record) if n != "close"]


def test_my_work_asks_the_model_admin_what_its_change_page_offers(clerk, client, monkeypatch):
    monkeypatch.setitem(admin.site._registry, Ticket, OwnTicketsAdmin(Ticket, admin.site))
    Ticket.objects.create(reopened=9)  # not in the admin's queryset: no change page
    Ticket.objects.create(owner=User.objects.create_user("someone"))  # not the clerk's to change
    mine = Ticket.objects.create(owner=clerk)
    client.force_login(clerk)
    rows = client.get(MY_WORK).context["rows"]
    assert [(row["item"].record, row["item"].actions) for row in rows] == [(mine, ("start",))]


def test_my_work_words_an_overdue_deadline_as_the_admin_does(waiting, clerk, client, time_machine):
    time_machine.move_to(datetime(2026, 12, 30, 12, 0, tzinfo=ZAGREB), tick=False)
    client.force_login(clerk)
    html = client.get(MY_WORK).content.decode()
    assert (
        '<span class="workflow-overdue">Reminder due Tue 29 Dec 09:00 (overdue by 1 d 2 h)' in html
    )


def test_my_work_shows_every_time_in_the_current_zone_named_once(waiting, admin_client, settings):
    """A claim counted in Zagreb beside a proposal counted in UTC: both deadlines read in
    the site's zone, which the page names once at the top."""
    settings.TIME_ZONE = "Europe/Zagreb"
    assert (Proposal.workflow.time_zone, Claim.workflow.time_zone) == ("UTC", "Europe/Zagreb")
    html = admin_client.get(MY_WORK).content.decode()
    assert html.count('<p class="workflow-zone">Times in Europe/Zagreb (CET).</p>') == 1
    assert "Reminder due Sun 27 Dec 10:00 (in 2 d)" in html  # the proposal's, 09:00 UTC
    assert "Reminder due Tue 29 Dec 10:00 (in 4 d)" in html  # the claim's
    content = html[html.index('id="content-main"') :]
    assert re.findall(r"\b(UTC|GMT|CES?T)\b", content) == ["CET"]


def test_my_work_is_for_staff_and_linked_from_the_overview(clerk, client, admin_user):
    client.force_login(user_with("visitor"))
    assert client.get(MY_WORK).status_code == 302  # to the admin's login
    client.force_login(clerk)
    assert "Nothing is waiting for you." in client.get(MY_WORK).content.decode()
    client.force_login(admin_user)
    assert f'href="{MY_WORK}"' in client.get(OVERVIEW).content.decode()


def test_a_superuser_sees_every_registered_model(waiting, admin_client):
    rows = admin_client.get(MY_WORK).context["rows"]
    assert [row["item"].record for row in rows] == [
        waiting["proposal"],  # Escalation is not registered in the test admin
        waiting["claim"],
        waiting["ticket"],
    ]


# The check ---------------------------------------------------------------------------------


def ids(model):
    return [message.id.removeprefix("django_workflow.") for message in check_model(model)]


def signs_off(actor, record, name):
    return actor is not None


def test_a_custom_policy_without_q_is_warned_about(declare):
    class Workflow:
        draft = Step(Transition("submit", to="done"), policy=signs_off)
        done = Step()

    [warning] = check_model(declare(Workflow))
    assert warning.id == "django_workflow.W007"
    assert "step 'draft', transition 'submit': policy signs_off has no q(actor)" in warning.msg
    assert "set q = None" in warning.hint


def test_a_custom_policy_inside_a_shipped_one_is_warned_about_once(declare):
    class Workflow:
        draft = Step(Transition("submit", to="done"), Transition("drop", to="done"))
        done = Step()
        policies = {"submit": any_of(is_staff, signs_off), "drop": signs_off}

    assert ids(declare(Workflow)) == ["W007"]


def test_shipped_policies_and_q_none_are_not_warned_about(declare):
    def asked_per_record(actor, record, name):
        return True

    asked_per_record.q = None

    class Workflow:
        draft = Step(Transition("submit", to="done"), policy=asked_per_record)
        done = Step(Transition("reopen", to="draft"), policy=relates_to_actor_via("owner"))

    model = declare(Workflow, owner=models.IntegerField(null=True))
    assert ids(model) == []
