"""Acting on workflows outside the admin (docs/outside-the-admin.md): the template tags
render what the request's user may do, and the view their forms post to runs it through
the call the admin's buttons make. Refusals show in place; forged posts are refused
before anything runs."""

import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import Permission, User
from django.template import Context, Template
from django.test import Client, RequestFactory

from django_workflow.models import TransitionLog
from example_project.support.models import Ticket as SupportTicket
from tests.testapp.models import Decision, Expense, Routed, Ticket

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def person(name, *perms):
    """A user who is not staff, holding ``perms`` ("app.codename")."""
    user = User.objects.create_user(name, password="secret")
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


def logged_in(user, **kwargs):
    client = Client(**kwargs)
    client.force_login(user)
    return client


class Forms(HTMLParser):
    """The forms of a page: each with its action, its fields, and the transition its
    button names."""

    def __init__(self, html):
        super().__init__()
        self.forms = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action"), "fields": {}, "transition": None})
        elif self.forms and tag in ("input", "textarea", "select") and attrs.get("name"):
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value", "")
        elif self.forms and tag == "button" and attrs.get("data-transition"):
            self.forms[-1]["transition"] = attrs["data-transition"]


def rendered(tag, user, record=None, path="/somewhere/"):
    request = RequestFactory().get(path)
    request.user = user
    template = Template("{% load workflow %}" + tag)
    return template.render(Context({"request": request, "record": record}))


def offered_forms(user, record):
    """The transition forms ``{% workflow_actions record %}`` shows ``user``, by name."""
    html = rendered("{% workflow_actions record %}", user, record)
    return {form["transition"]: form for form in Forms(html).forms if form["transition"]}


def post(client, form, **extra):
    """Post ``form`` as a browser would, with ``extra`` fields set or changed."""
    headers = extra.pop("headers", {})
    return client.post(form["action"], {**form["fields"], **extra}, **headers)


def logged():
    return TransitionLog.objects.exclude(triggered_by="initial").count()


def note(response):
    found = re.search(r'class="workflow-note [^"]*"[^>]*>([^<]*)<', response.content.decode())
    return found.group(1) if found else None


# What the tags show --------------------------------------------------------------------


def test_the_actions_tag_offers_the_transitions_the_user_may_call_as_forms():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    forms = offered_forms(agent, ticket)
    assert list(forms) == ["close", "start"]
    assert forms["start"]["action"] == f"/workflow/testapp/ticket/{ticket.pk}/start/"
    assert set(forms["start"]["fields"]) == {
        "csrfmiddlewaretoken",
        "workflow-offer",
        "workflow-next",
        "workflow-comment",
    }
    assert forms["start"]["fields"]["workflow-next"] == "/somewhere/"


def test_view_only_users_see_the_step_but_no_forms_and_others_see_nothing():
    ticket = Ticket.objects.create()
    viewer = person("viewer", "testapp.view_ticket")
    html = rendered("{% workflow_actions record %}", viewer, ticket)
    assert "workflow-current" in html and "<form" not in html
    assert rendered("{% workflow_actions record %}", person("stranger"), ticket).strip() == ""
    assert rendered("{% workflow_history record %}", person("other"), ticket).strip() == ""


def test_a_transition_into_a_final_step_is_marked_as_asking_first():
    agent = person("agent", "testapp.change_ticket")
    html = rendered("{% workflow_actions record %}", agent, Ticket.objects.create())
    assert 'data-transition="close">Close…</button>' in html
    assert 'data-transition="start">Start</button>' in html


def test_a_transition_accepting_values_asks_for_them_in_its_form():
    clerk = person("clerk", "testapp.change_decision")
    form = offered_forms(clerk, Decision.objects.create())["approve"]
    assert "values-note" in form["fields"]


def test_history_and_deadlines_read_in_words():
    agent = person("agent", "support.view_ticket")
    ticket = SupportTicket.objects.create(subject="Printer")
    ticket.triage(actor=agent, priority="urgent", comment="the whole floor")
    history = rendered("{% workflow_history record %}", agent, ticket)
    assert "<strong>Triage</strong>" in history and "New → Urgent" in history
    assert "the whole floor" in history and "agent" in history
    deadlines = rendered("{% workflow_deadlines record %}", agent, ticket)
    assert "SLA warning due" in deadlines and "SLA breach due" in deadlines


def test_the_inbox_lists_what_the_user_may_act_on_with_its_forms():
    agent = person("agent", "support.change_ticket")
    waiting = SupportTicket.objects.create(subject="Printer")
    waiting.triage()
    done = SupportTicket.objects.create(subject="Done")
    done.triage()
    done.resolve()
    html = rendered("{% workflow_inbox %}", agent)
    assert f'data-record="support.ticket:{waiting.pk}"' in html
    assert f'data-record="support.ticket:{done.pk}"' not in html  # final: nothing to do
    assert 'data-transition="resolve"' in html
    assert "Nothing is waiting" in rendered("{% workflow_inbox %}", person("viewer"))


def test_a_tag_without_the_request_in_its_context_says_how_to_fix_it():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match=r"context_processors\.request"):
        Template("{% load workflow %}{% workflow_inbox %}").render(Context({}))


# Acting --------------------------------------------------------------------------------


def test_a_post_moves_the_record_logs_the_user_and_comment_and_goes_back():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    form = offered_forms(agent, ticket)["start"]
    response = post(logged_in(agent), form, **{"workflow-comment": "on it"})
    assert response.status_code == 302 and response["Location"] == "/somewhere/"
    row = TransitionLog.objects.get(transition_name="start")
    assert (row.actor_id, row.comment) == (agent.pk, "on it")
    assert Ticket.objects.get(pk=ticket.pk).state == "working"


def test_next_leading_off_the_site_is_replaced_by_the_record_page():
    agent = person("agent", "support.change_ticket")
    ticket = SupportTicket.objects.create(subject="Printer")
    form = offered_forms(agent, ticket)["triage"]
    response = post(
        logged_in(agent),
        form,
        **{"workflow-next": "https://evil.example/", "values-priority": "normal"},
    )
    assert response["Location"] == f"/agent/tickets/{ticket.pk}/"


def test_with_htmx_the_answer_is_the_fragment_to_swap_in_place():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    response = post(logged_in(agent), offered_forms(agent, ticket)["start"], headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.startswith('<div class="workflow-actions-box"') and "<body" not in html
    assert 'data-step="working"' in html and "is now in Working" in note(response)
    assert json.loads(response["HX-Trigger"]) == {
        "workflowChanged": {"record": f"testapp.ticket:{ticket.pk}"}
    }


def test_a_move_into_a_final_step_is_confirmed_first():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    client = logged_in(agent)
    first = post(client, offered_forms(agent, ticket)["close"], **{"workflow-comment": "dup"})
    assert first.status_code == 200 and logged() == 0
    assert "a final step: it cannot move again afterwards" in first.content.decode()
    (confirm,) = Forms(first.content.decode()).forms
    assert confirm["fields"]["workflow-comment"] == "dup"  # carried to the confirmation
    assert post(client, confirm).status_code == 302
    assert Ticket.objects.get(pk=ticket.pk).state == "closed"
    assert TransitionLog.objects.get(transition_name="close").comment == "dup"


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_the_confirmation_swaps_in_place_with_htmx_and_is_a_page_without(headers):
    agent = person("agent", "testapp.change_ticket")
    response = post(
        logged_in(agent),
        offered_forms(agent, Ticket.objects.create())["close"],
        headers=headers,
    )
    assert ("<body" in response.content.decode()) is (not headers)


# Refusals, in place --------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_a_stale_page_is_told_where_the_record_is_now(headers):
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    form = offered_forms(agent, ticket)["start"]
    Ticket.objects.get(pk=ticket.pk).start(authorize=False)  # someone else, meanwhile
    response = post(logged_in(agent), form, headers=headers)
    assert response.status_code == 200
    assert "changed since the page was shown; it is in Working now" in note(response)
    assert logged() == 1


def test_a_policy_that_no_longer_allows_refuses_in_place():
    owner, other = person("owner", "testapp.change_ticket"), person("other")
    ticket = Ticket.objects.create(owner=owner)
    ticket.start(authorize=False)
    Ticket.objects.get(pk=ticket.pk).close(
        authorize=False
    )  # working -> resolved: reopen is the owner's
    form = offered_forms(owner, Ticket.objects.get(pk=ticket.pk))["reopen"]
    Ticket.objects.filter(pk=ticket.pk).update(owner=other)
    response = post(logged_in(owner), form, headers=HTMX)
    assert response.status_code == 200
    assert "you may not “Reopen” this record now" in note(response)
    assert Ticket.objects.get(pk=ticket.pk).state == "resolved" and logged() == 2


def test_a_condition_that_no_longer_holds_says_why_in_place():
    clerk = person("clerk", "testapp.change_expense")
    expense = Expense.objects.create(receipt=True)
    form = offered_forms(clerk, expense)["approve"]
    Expense.objects.filter(pk=expense.pk).update(receipt=False)
    response = post(logged_in(clerk), form, **{"values-approved_by": "me"})
    assert response.status_code == 200 and "Attach the receipt first." in note(response)
    assert logged() == 0


def test_no_route_holding_refuses_in_place():
    clerk = person("clerk", "testapp.change_routed")
    form = offered_forms(clerk, Routed.objects.create())["decide"]
    response = post(logged_in(clerk), form, **{"values-decision": "maybe"}, headers=HTMX)
    assert response.status_code == 200
    assert "no way onward from “Decide” holds" in note(response)
    assert logged() == 0


def test_bad_values_show_their_errors_in_place_and_keep_what_was_typed():
    clerk = person("clerk", "testapp.change_decision")
    decision = Decision.objects.create()
    form = offered_forms(clerk, decision)["approve"]
    response = post(logged_in(clerk), form, **{"values-note": "x" * 101, "headers": HTMX})
    html = response.content.decode()
    assert response.status_code == 200 and "please correct the values" in note(response)
    assert "at most 100 characters" in html and "x" * 101 in html
    assert logged() == 0 and Decision.objects.get(pk=decision.pk).note == ""


def test_a_comment_the_log_cannot_store_refuses_in_place():
    agent = person("agent", "testapp.change_ticket")
    form = offered_forms(agent, Ticket.objects.create())["start"]
    response = post(logged_in(agent), form, **{"workflow-comment": "bad\x00"})
    assert response.status_code == 200 and logged() == 0


# Forged posts: refused before anything runs, nothing logged ------------------------------


def test_a_post_without_an_offer_is_forbidden():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    form = offered_forms(agent, ticket)["start"]
    response = post(logged_in(agent), form, **{"workflow-offer": ""})
    assert response.status_code == 403 and logged() == 0


def test_an_offer_of_another_transition_is_forbidden():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    forms = offered_forms(agent, ticket)
    forged = {**forms["start"], "action": forms["close"]["action"]}
    assert post(logged_in(agent), forged).status_code == 403 and logged() == 0


def test_an_offer_of_another_record_is_forbidden():
    agent = person("agent", "testapp.change_ticket")
    mine, theirs = Ticket.objects.create(), Ticket.objects.create()
    forged = {**offered_forms(agent, mine)["start"]}
    forged["action"] = forged["action"].replace(f"/{mine.pk}/", f"/{theirs.pk}/")
    assert post(logged_in(agent), forged).status_code == 403 and logged() == 0


def test_another_users_offer_is_forbidden():
    owner, other = (
        person("owner", "testapp.change_ticket"),
        person("other", "testapp.change_ticket"),
    )
    ticket = Ticket.objects.create(owner=owner)
    ticket.start(authorize=False)
    Ticket.objects.get(pk=ticket.pk).close(authorize=False)
    form = offered_forms(owner, Ticket.objects.get(pk=ticket.pk))["reopen"]
    assert "reopen" not in offered_forms(other, Ticket.objects.get(pk=ticket.pk))
    assert post(logged_in(other), form).status_code == 403 and logged() == 2


def test_a_transition_the_step_does_not_offer_is_forbidden():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    form = offered_forms(agent, ticket)["start"]
    forged = {**form, "action": form["action"].replace("/start/", "/reopen/")}
    assert post(logged_in(agent), forged).status_code == 403 and logged() == 0


def test_view_only_users_are_forbidden_even_with_an_offer_they_once_had():
    agent = person("agent", "testapp.change_ticket", "testapp.view_ticket")
    form = offered_forms(agent, Ticket.objects.create())["start"]
    grant = Permission.objects.get(content_type__app_label="testapp", codename="change_ticket")
    agent.user_permissions.remove(grant)
    assert post(logged_in(agent), form).status_code == 403 and logged() == 0


@pytest.mark.parametrize(
    "action",
    [
        "/workflow/testapp/ticket/999999/start/",  # no such record
        "/workflow/testapp/ticket/not-a-number/start/",  # a malformed key
        "/workflow/testapp/nosuchmodel/1/start/",
        "/workflow/auth/user/1/start/",  # a model without a workflow
        "/workflow/nosuchapp/ticket/1/start/",
    ],
)
def test_records_that_cannot_be_found_are_not_found(action):
    agent = person("agent", "testapp.change_ticket")
    response = logged_in(agent).post(action, {"workflow-offer": "x"})
    assert response.status_code == 404 and logged() == 0


def test_a_record_the_user_may_not_view_is_not_found():
    agent = person("agent", "testapp.change_ticket")
    form = offered_forms(agent, Ticket.objects.create())["start"]
    stranger = person("stranger", "testapp.change_decision")
    assert post(logged_in(stranger), form).status_code == 404 and logged() == 0


def test_anonymous_posts_are_not_found_and_get_is_not_allowed():
    agent = person("agent", "testapp.change_ticket")
    form = offered_forms(agent, Ticket.objects.create())["start"]
    assert post(Client(), form).status_code == 404
    assert logged_in(agent).get(form["action"]).status_code == 405
    assert logged() == 0


def test_csrf_is_enforced_and_the_page_s_token_is_accepted():
    agent = person("agent", "support.view_ticket", "support.change_ticket")
    ticket = SupportTicket.objects.create(subject="Printer")
    client = logged_in(agent, enforce_csrf_checks=True)
    page = client.get(f"/agent/tickets/{ticket.pk}/").content.decode()
    form = next(f for f in Forms(page).forms if f["transition"] == "triage")
    without = {k: v for k, v in form["fields"].items() if k != "csrfmiddlewaretoken"}
    response = client.post(form["action"], {**without, "values-priority": "urgent"})
    assert response.status_code == 403 and logged() == 0
    response = post(client, form, **{"values-priority": "urgent"})
    assert response.status_code == 302
    assert SupportTicket.objects.get(pk=ticket.pk).state == "urgent"


# The example project's agent pages ------------------------------------------------------


def test_the_agent_queue_asks_for_a_login_and_then_lists_the_tickets():
    agent = person("agent", "support.view_ticket", "support.change_ticket")
    SupportTicket.objects.create(subject="Printer on fire")
    assert Client().get("/agent/")["Location"].startswith("/accounts/login/")
    client = Client()
    client.post("/accounts/login/", {"username": "agent", "password": "secret"})
    page = client.get("/agent/").content.decode()
    assert "Printer on fire" in page and 'data-transition="triage"' in page
    assert agent.is_staff is False


def test_a_route_decides_whether_a_move_is_confirmed_and_names_where_it_ends():
    clerk = person("clerk", "testapp.change_routed")
    routed = Routed.objects.create()
    form = offered_forms(clerk, routed)["decide"]
    response = post(logged_in(clerk), form, **{"values-decision": "decline"}, headers=HTMX)
    assert f"moves {routed} to Declined, a final step" in response.content.decode()
    assert logged() == 0


def test_the_demo_s_agent_is_not_staff_and_works_the_queue():
    from example_project.hiring.management.commands.seed_demo import agent_user

    assert agent_user().pk == agent_user().pk  # seeding again keeps the one agent
    ticket = SupportTicket.objects.create(subject="Printer on fire")
    ticket.triage()  # technical: "escalate" is for staff only
    client = Client()
    client.post("/accounts/login/", {"username": "agent", "password": "agent"})
    page = client.get(f"/agent/tickets/{ticket.pk}/").content.decode()
    assert 'data-transition="resolve"' in page and 'data-transition="escalate"' not in page
    assert User.objects.get(username="agent").is_staff is False


def test_a_vote_short_of_its_quorum_asks_no_confirmation_and_says_it_counted():
    from example_project.approvals.models import Document

    alice = person("alice", "approvals.change_document")
    bob = person("bob", "approvals.change_document")
    document = Document.objects.create(title="Budget").submit()
    form = offered_forms(alice, document)["approve"]
    response = post(logged_in(alice), form, headers=HTMX)
    assert note(response) == "Your vote for “Approve” is recorded (1 of 2)."
    assert Document.objects.get(pk=document.pk).state == "in_review"
    # The vote that completes it moves the record into a final step: confirmed first.
    response = post(logged_in(bob), offered_forms(bob, document)["approve"], headers=HTMX)
    assert "a final step" in response.content.decode()
    assert Document.objects.get(pk=document.pk).state == "in_review"


def test_history_is_in_the_records_zone_named_as_the_admin_names_it(time_machine):
    # Release 3 showed UTC without naming it, beside deadlines in the record's zone.
    time_machine.move_to(datetime(2026, 6, 1, 7, 30, tzinfo=UTC), tick=False)
    agent = person("agent", "support.view_ticket")
    ticket = SupportTicket.objects.create(subject="Printer")
    ticket.triage(actor=agent, priority="urgent")
    history = rendered("{% workflow_history record %}", agent, ticket)
    assert "Times in Europe/Zagreb (CEST)." in history
    assert "2026-06-01 09:30" in history and "07:30" not in history


def test_without_javascript_the_answer_page_is_styled_with_one_back_link():
    agent = person("agent", "testapp.change_ticket")
    ticket = Ticket.objects.create()
    page = post(logged_in(agent), offered_forms(agent, ticket)["close"]).content.decode()
    assert "a final step" in page  # the confirmation, on the page of its own
    assert page.count('class="workflow-back"') == 1
    assert "/static/django_workflow/tags.css" in page
    forms = offered_forms(agent, ticket)
    assert "Comment on “Start”" in rendered("{% workflow_actions record %}", agent, ticket)
    assert forms["start"]["transition"] == "start"
