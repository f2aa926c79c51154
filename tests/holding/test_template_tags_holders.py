"""The template tags on records people hold (docs/outside-the-admin.md,
docs/holding-work.md): ``{% workflow_actions %}`` offers Claim or Release as
``record.claim()`` and ``record.release()`` allow, and a claim step's transitions only
to its holder or a stand-in; the posts run those calls, refusals shown in place; the
inbox sorts the records as the admin's "My work" does."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import signing
from django.utils import timezone

from django_workflow.models import Absence, TransitionLog
from django_workflow.web.form_offers import HOLD_SALT, offers, record_key
from example_project.support.models import Ticket as SupportTicket
from tests.helpers import fresh
from tests.outside_the_admin.test_template_tags import (
    HTMX,
    Forms,
    logged,
    logged_in,
    note,
    offered_forms,
    person,
    post,
    rendered,
)
from tests.testapp.models import Errand

pytestmark = pytest.mark.django_db

WORKER = ("testapp.view_errand", "testapp.change_errand")


class HoldForms(Forms):
    """The page's forms, each also with the Claim or Release its button names."""

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        if self.forms and tag == "button" and dict(attrs).get("data-hold"):
            self.forms[-1]["hold"] = dict(attrs)["data-hold"]


def hold_form(user, record, html=None):
    """The Claim or Release form ``{% workflow_actions record %}`` shows ``user``."""
    html = html if html is not None else rendered("{% workflow_actions record %}", user, record)
    found = [form for form in HoldForms(html).forms if form.get("hold")]
    assert len(found) <= 1
    return found[0] if found else None


def holding_rows(record):
    rows = TransitionLog.objects.filter(object_id=str(record.pk), triggered_by="assignment")
    return list(rows.order_by("id").values_list("transition_name", "actor__username"))


@pytest.fixture
def working():
    """An errand in ``working``, a claim step: only its holder finishes it."""
    return Errand.objects.create(title="Fix the gate").start()


@pytest.fixture
def alice():
    return person("alice", *WORKER)


@pytest.fixture
def bob():
    return person("bob", *WORKER)


# What the actions tag shows ------------------------------------------------------------


def test_an_unheld_claim_step_offers_claim_and_no_transition(working, alice):
    html = rendered("{% workflow_actions record %}", alice, working)
    assert "Nobody holds it. Only its holder may call this step" in html
    assert hold_form(alice, working, html)["hold"] == "claim"
    assert offered_forms(alice, working) == {}
    assert "Nothing for you to do" not in html  # Claim is something to do


def test_the_holder_sees_release_and_the_steps_transitions(working, alice):
    working.claim(alice)
    html = rendered("{% workflow_actions record %}", alice, fresh(working))
    assert "Held by alice." in html
    assert hold_form(alice, fresh(working), html)["hold"] == "release"
    assert list(offered_forms(alice, fresh(working))) == ["finish", "note", "hand_back"]


def test_a_non_holder_sees_no_transition_as_the_engine_decides(working, alice, bob):
    working.claim(alice)
    record = fresh(working)
    assert offered_forms(bob, record) == {}
    assert [offer.name for offer in offers(record, bob)] == record.available_actions(bob) == []
    # bob may change errands: the default ``assign`` policy lets him release the claim
    assert hold_form(bob, record)["hold"] == "release"
    viewer = person("viewer", "testapp.view_errand")
    html = rendered("{% workflow_actions record %}", viewer, record)
    assert "Held by alice." in html and "<form" not in html


def test_a_step_without_claim_offers_claim_beside_its_transitions(alice):
    errand = Errand.objects.create(title="Sweep")
    assert hold_form(alice, errand)["hold"] == "claim"
    assert list(offered_forms(alice, errand)) == ["start", "drop"]


def test_a_final_step_says_nothing_of_holders(alice):
    done = Errand.objects.create(title="Done")
    Errand.objects.filter(pk=done.pk).update(state="done")
    html = rendered("{% workflow_actions record %}", alice, fresh(done))
    assert "holds it" not in html and "Held by" not in html
    assert hold_form(alice, fresh(done)) is None


# Claiming and releasing through the view ------------------------------------------------


def test_claim_and_release_through_the_view(working, alice):
    client = logged_in(alice)
    response = post(client, hold_form(alice, working))
    assert response.status_code == 302 and response["Location"] == "/somewhere/"
    assert fresh(working).assignee == alice
    form = hold_form(alice, fresh(working))
    assert form["action"] == f"/workflow/testapp/errand/{working.pk}/hold/release/"
    response = post(client, form)
    assert response.status_code == 302
    assert fresh(working).assignee is None
    assert holding_rows(working) == [("claim", "alice"), ("release", "alice")]


def test_with_htmx_a_claim_swaps_in_the_holders_forms(working, alice):
    response = post(logged_in(alice), hold_form(alice, working), headers=HTMX)
    assert response.status_code == 200
    assert note(response) == "You hold Fix the gate."
    assert json.loads(response["HX-Trigger"]) == {
        "workflowChanged": {"record": record_key(working)}
    }
    html = response.content.decode()
    assert "Held by alice." in html and 'data-transition="finish"' in html


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_second_users_claim_is_refused_in_place(working, alice, bob, headers):
    alices, bobs = hold_form(alice, working), hold_form(bob, working)  # both pages show Claim
    post(logged_in(alice), alices)
    response = post(logged_in(bob), bobs, headers=headers)
    assert response.status_code == 200
    assert note(response) == "Nothing done: alice holds this record already."
    assert fresh(working).assignee == alice
    assert holding_rows(working) == [("claim", "alice")]
    assert 'data-transition="finish"' not in response.content.decode()


def test_a_claim_from_a_page_older_than_the_step_is_stale(working, alice):
    form = hold_form(alice, working)
    fresh(working).hand_back(authorize=False)  # back to open, meanwhile
    response = post(logged_in(alice), form)
    assert "changed since the page was shown; it is in Open now" in note(response)
    assert fresh(working).assignee is None and holding_rows(working) == []


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_release_from_before_a_change_of_hands_lets_nobody_go(working, alice, bob, headers):
    working.claim(alice)
    form = hold_form(alice, fresh(working))
    fresh(working).release(alice)
    response = post(logged_in(alice), form, headers=headers)
    assert note(response) == (
        "Nothing done: Fix the gate changed hands since the page was shown; nobody holds it now."
    )
    fresh(working).claim(bob)  # alice may release others' claims, but not from this page
    response = post(logged_in(alice), form, headers=headers)
    assert response.status_code == 200
    assert note(response).endswith("changed hands since the page was shown; bob holds it now.")
    assert fresh(working).assignee == bob
    assert holding_rows(working) == [("claim", "alice"), ("release", "alice"), ("claim", "bob")]


# A stand-in -----------------------------------------------------------------------------


def test_a_delegate_with_an_active_absence_sees_and_acts_for_the_holder(working, alice, bob):
    working.claim(alice)
    now = timezone.now()
    Absence.objects.create(
        user=alice, delegate=bob, starts_at=now - timedelta(hours=1), ends_at=now + timedelta(1)
    )
    forms = offered_forms(bob, fresh(working))
    assert list(forms) == ["finish", "note", "hand_back"]
    response = post(logged_in(bob), forms["note"], **{"workflow-comment": "on it"})
    assert response.status_code == 302
    row = TransitionLog.objects.get(object_id=str(working.pk), transition_name="note")
    assert (row.actor, row.on_behalf_of, row.comment) == (bob, alice, "on it")
    inbox = rendered("{% workflow_inbox %}", bob)
    assert 'data-section="Held by others I stand in for"' in inbox
    assert f'data-record="{record_key(working)}"' in inbox


def test_an_absence_over_lends_nothing(working, alice, bob):
    working.claim(alice)
    now = timezone.now()
    Absence.objects.create(
        user=alice, delegate=bob, starts_at=now - timedelta(2), ends_at=now - timedelta(1)
    )
    assert offered_forms(bob, fresh(working)) == {}


# Forged posts ---------------------------------------------------------------------------


def forged(record, user, action, step="working"):
    return signing.dumps([record_key(record), step, action, user.pk], salt="another salt")


def test_forged_claims_are_forbidden_and_log_nothing(working, alice, bob):
    url = f"/workflow/testapp/errand/{working.pk}/hold/claim/"
    client = logged_in(alice)
    before = logged()
    bobs = hold_form(bob, working)["fields"]["workflow-offer"]
    releases = signing.dumps([record_key(working), "working", "release", alice.pk], salt=HOLD_SALT)
    transition = offered_forms(alice, Errand.objects.create())["start"]["fields"]["workflow-offer"]
    for token in ("", "nonsense", bobs, releases, transition, forged(working, alice, "claim")):
        assert client.post(url, {"workflow-offer": token}).status_code == 403
    assert logged() == before and fresh(working).assignee is None


def test_a_claim_without_the_change_permission_is_forbidden(working, alice):
    token = hold_form(alice, working)["fields"]["workflow-offer"]
    viewer = User.objects.get(pk=alice.pk)
    viewer.user_permissions.remove(*viewer.user_permissions.filter(codename="change_errand"))
    viewer = User.objects.get(pk=alice.pk)
    url = f"/workflow/testapp/errand/{working.pk}/hold/claim/"
    assert logged_in(viewer).post(url, {"workflow-offer": token}).status_code == 403
    assert holding_rows(working) == []


def test_an_unknown_hold_action_or_a_model_without_holders_is_not_found(working, alice):
    from tests.testapp.models import Ticket

    client = logged_in(person("clerk", *WORKER, "testapp.change_ticket", "testapp.view_ticket"))
    assert client.post(f"/workflow/testapp/errand/{working.pk}/hold/grab/").status_code == 404
    ticket = Ticket.objects.create()
    assert client.post(f"/workflow/testapp/ticket/{ticket.pk}/hold/claim/").status_code == 404
    assert client.get(f"/workflow/testapp/errand/{working.pk}/hold/claim/").status_code == 405
    assert holding_rows(working) == []


# The inbox -----------------------------------------------------------------------------


def test_the_inbox_sorts_the_records_as_my_work_does_and_renders_claim_as_a_button(
    working, alice, bob
):
    mine = Errand.objects.create(title="Mine").start()
    mine.claim(alice)
    theirs = Errand.objects.create(title="Theirs").start()
    theirs.claim(bob)
    html = rendered("{% workflow_inbox %}", alice)
    sections = html.split('data-section="')
    titles = [part.split('"')[0] for part in sections[1:]]
    assert titles == ["Held by me", "Unclaimed"]
    held_by_me, unclaimed = sections[1], sections[2]
    assert f'data-record="{record_key(mine)}"' in held_by_me
    assert f'data-record="{record_key(working)}"' in unclaimed
    assert f'data-record="{record_key(theirs)}"' not in html  # another's, never listed
    claim = hold_form(alice, working, unclaimed.split("</article>")[0])
    assert claim["hold"] == "claim"
    assert 'data-transition="finish"' not in unclaimed.split("</article>")[0]
    response = post(logged_in(alice), claim)  # the inbox's Claim works as the page's
    assert response.status_code == 302 and fresh(working).assignee == alice


# The example project's agent ------------------------------------------------------------


def test_the_demo_agent_claims_an_escalated_ticket_releases_it_claims_it_and_resolves_it():
    from example_project.hiring.management.commands.seed_demo import agent_user

    agent = agent_user()
    ticket = SupportTicket.objects.create(subject="Database down")
    ticket.triage(priority="urgent")
    fresh(ticket).escalate(authorize=False)  # staff escalate; any agent may work it
    client = logged_in(agent)
    queue = client.get("/agent/").content.decode()
    assert 'data-section="Unclaimed"' in queue and 'data-hold="claim"' in queue

    def page():
        return client.get(f"/agent/tickets/{ticket.pk}/").content.decode()

    post(client, hold_form(agent, ticket, page()))
    assert fresh(ticket).assignee == agent
    post(client, hold_form(agent, ticket, page()))  # Release
    assert fresh(ticket).assignee is None
    post(client, hold_form(agent, ticket, page()))
    resolve = offered_forms(agent, fresh(ticket))["resolve"]
    assert resolve["action"] in page()
    response = post(client, resolve, headers=HTMX)  # into a final step: confirmed first
    confirm = next(f for f in Forms(response.content.decode()).forms if f["transition"])
    post(client, confirm)
    assert fresh(ticket).state == "resolved" and fresh(ticket).assignee is None
    assert holding_rows(ticket) == [("claim", "agent"), ("release", "agent"), ("claim", "agent")]
    row = TransitionLog.objects.get(object_id=str(ticket.pk), transition_name="resolve")
    assert row.actor == agent
