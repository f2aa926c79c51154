"""The admin: a read-only log, and WorkflowAdminMixin on a change page (docs/admin.md)."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from django_workflow.admin import describe_deadline
from django_workflow.engine import run_step
from django_workflow.models import PendingEffect, TransitionLog
from django_workflow.testing import run_due_work
from tests.testapp.models import (
    Claim,
    Decision,
    Expense,
    Proposal,
    Routed,
    Shipment,
    Sync,
    Ticket,
)

pytestmark = pytest.mark.django_db


def test_the_log_lists_rows_and_filters_by_trigger(admin_client):
    Routed.objects.create(amount=3).size()
    page = admin_client.get("/admin/django_workflow/transitionlog/", {"triggered_by": "manual"})
    assert page.status_code == 200
    assert b"small" in page.content and page.context["cl"].result_count == 1


def test_a_model_filter_value_that_is_no_content_type_answers_as_django_does(admin_client):
    # Release 3 answered 500 (ValueError: Field 'id' expected a number).
    Routed.objects.create()
    page = admin_client.get("/admin/django_workflow/transitionlog/", {"model": "support.ticket"})
    assert page.status_code == 302 and page["Location"].endswith("?e=1")


def test_the_log_is_newest_first_filters_workflow_models_and_links_the_record(admin_client):
    decision = Decision.objects.create()
    decision.hold(actor="someone")
    page = admin_client.get("/admin/django_workflow/transitionlog/")
    rows = list(page.context["cl"].result_list)
    assert [row.triggered_by for row in rows[:2]] == ["manual", "initial"]
    model_filter = next(f for f in page.context["cl"].filter_specs if f.parameter_name == "model")
    labels = {label for _value, label in model_filter.lookup_choices}
    assert "Decision" in labels and "User" not in labels and "Permission" not in labels
    assert f'href="/admin/testapp/decision/{decision.pk}/change/"' in page.content.decode()
    found = admin_client.get("/admin/django_workflow/transitionlog/", {"q": "held"})
    assert found.context["cl"].result_count == 1


def test_nobody_may_add_change_or_delete_log_rows(admin_client):
    Routed.objects.create()
    entry = TransitionLog.objects.get()
    assert admin_client.get("/admin/django_workflow/transitionlog/add/").status_code == 403
    response = admin_client.post(
        f"/admin/django_workflow/transitionlog/{entry.pk}/change/", {"to_state": "forged"}
    )
    assert response.status_code == 403
    response = admin_client.post(
        f"/admin/django_workflow/transitionlog/{entry.pk}/delete/", {"post": "yes"}
    )
    assert response.status_code == 403
    assert TransitionLog.objects.get().to_state == "open"


def test_any_staff_user_reads_the_log_of_the_models_whose_admin_they_may_view(client):
    decision, ticket = Decision.objects.create(), Ticket.objects.create()
    user = User.objects.create_user("clerk", password="pw", is_staff=True)
    client.force_login(user)
    page = client.get("/admin/django_workflow/transitionlog/")
    assert page.status_code == 200 and page.context["cl"].result_count == 0
    user.user_permissions.add(
        Permission.objects.get(codename="view_decision", content_type__app_label="testapp")
    )
    page = client.get("/admin/django_workflow/transitionlog/")
    assert [row.object_id for row in page.context["cl"].result_list] == [str(decision.pk)]
    model_filter = next(f for f in page.context["cl"].filter_specs if f.parameter_name == "model")
    assert [label for _value, label in model_filter.lookup_choices] == ["Decision"]
    hidden = TransitionLog.objects.get(object_id=str(ticket.pk), content_type__model="ticket")
    path = f"/admin/django_workflow/transitionlog/{hidden.pk}/change/"
    assert client.get(path).status_code == 302  # Django's "does not exist" redirect
    index = client.get("/admin/").context["app_list"]
    assert "TransitionLog" in {m["object_name"] for app in index for m in app["models"]}


def test_the_log_permission_shows_every_models_rows(client):
    Decision.objects.create(), Ticket.objects.create()
    user = User.objects.create_user("auditor", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_transitionlog"))
    client.force_login(user)
    page = client.get("/admin/django_workflow/transitionlog/")
    assert page.context["cl"].result_count == 2


# WorkflowAdminMixin ----------------------------------------------------------------------


def change_url(record):
    return f"/admin/testapp/{record._meta.model_name}/{record.pk}/change/"


def action_url(record, name):
    return f"/admin/testapp/{record._meta.model_name}/{record.pk}/workflow/{name}/"


def logged_in_viewer(client, codename):
    """A staff user, logged in, who holds only the permission ``codename``."""
    user = User.objects.create_user(codename, password="pw", is_staff=True)
    user.user_permissions.add(
        Permission.objects.get(codename=codename, content_type__app_label="testapp")
    )
    client.force_login(user)
    return user


@pytest.fixture
def viewer(client):
    """May view tickets, without change_ticket."""
    return logged_in_viewer(client, "view_ticket")


def test_the_change_page_shows_the_step_buttons_diagram_and_history(admin_client):
    decision = Decision.objects.create()
    page = admin_client.get(change_url(decision))
    assert page.status_code == 200
    panel = page.context["workflow"]
    assert (panel["current"], [a["name"] for a in panel["actions"]]) == (
        "pending",
        ["approve", "reject", "hold"],
    )
    html = page.content.decode()
    assert 'class="workflow-diagram"' in html
    assert 'class="step manual current" data-step="pending"' in html
    assert 'data-transition="reject"' in html
    assert "workflow-history-row initial" in html
    assert "/static/django_workflow/workflow.css" in html
    # Django's own History button sits above the panel, not on top of the workflow history.
    assert html.index('class="object-tools"') < html.index('id="workflow-panel"')


def test_a_button_runs_the_transition_as_the_logged_in_user(admin_client, admin_user):
    decision = Decision.objects.create()
    response = admin_client.post(action_url(decision, "reject"))
    assert response.status_code == 302 and response.url == change_url(decision)
    assert Decision.objects.get(pk=decision.pk).state == "rejected"
    row = decision.history().last()
    assert (row.actor, row.transition_name) == (admin_user, "reject")
    page = admin_client.get(change_url(decision))
    assert "Reject: now in Rejected." in [str(m) for m in page.context["messages"]]


def test_a_transition_that_accepts_fields_asks_for_them(admin_client):
    decision = Decision.objects.create()
    form_page = admin_client.get(action_url(decision, "approve"))
    assert form_page.status_code == 200 and 'name="note"' in form_page.content.decode()
    admin_client.post(action_url(decision, "approve"), {"note": "ship it"})
    stored = Decision.objects.get(pk=decision.pk)
    assert (stored.state, stored.note) == ("checking", "ship it")


def test_an_empty_accepted_value_shows_the_form_again_and_changes_nothing(admin_client):
    decision = Decision.objects.create()
    page = admin_client.post(action_url(decision, "approve"), {"note": ""})
    assert page.status_code == 200
    assert page.context["form"].errors == {"note": ["This field is required."]}
    assert Decision.objects.get(pk=decision.pk).state == "pending"
    assert TransitionLog.objects.filter(object_id=str(decision.pk)).count() == 1


def test_without_the_policy_there_is_no_button_and_a_forged_post_is_refused(client, viewer):
    ticket = Ticket.objects.create()
    page = client.get(change_url(ticket))
    assert page.status_code == 200
    assert page.context["workflow"]["actions"] == []
    assert "data-transition" not in page.content.decode()
    assert client.post(action_url(ticket, "close")).status_code == 403
    assert Ticket.objects.get(pk=ticket.pk).state == "new"


def test_with_the_policy_the_same_user_gets_the_buttons(client, viewer):
    viewer.user_permissions.add(
        Permission.objects.get(codename="change_ticket", content_type__app_label="testapp")
    )
    ticket = Ticket.objects.create()
    page = client.get(change_url(ticket))
    assert [a["name"] for a in page.context["workflow"]["actions"]] == ["close", "start"]
    client.post(action_url(ticket, "start"))
    assert Ticket.objects.get(pk=ticket.pk).state == "working"


def test_a_failing_call_shows_the_documented_error(admin_client):
    decision = Decision.objects.create()
    stale = Decision.objects.get(pk=decision.pk)
    stale.hold(actor="someone")  # the record moved on; the button below is now stale
    response = admin_client.post(action_url(decision, "reject"), follow=True)
    messages = [str(m) for m in response.context["messages"]]
    assert f"Decision {decision.pk}: On hold offers no “Reject”." in messages
    assert Decision.objects.get(pk=decision.pk).state == "held"


def test_a_get_cannot_run_a_transition_and_a_stale_link_leads_back_to_the_record(admin_client):
    decision = Decision.objects.create()
    response = admin_client.get(action_url(decision, "reject"))
    assert (response.status_code, response.url) == (302, change_url(decision))
    assert Decision.objects.get(pk=decision.pk).state == "pending"
    decision.hold(actor="someone")
    page = admin_client.get(action_url(decision, "reject"), follow=True)
    assert "On hold offers no “Reject”." in [str(m) for m in page.context["messages"]]


def test_undo_and_redo_are_buttons_named_for_what_they_reverse(admin_client, admin_user):
    decision = Decision.objects.create()
    admin_client.post(action_url(decision, "reject"))
    page = admin_client.get(change_url(decision))
    assert page.context["workflow"]["undo_label"] == "Undo “Reject”"
    admin_client.post(action_url(decision, "undo"))
    assert Decision.objects.get(pk=decision.pk).state == "pending"
    page = admin_client.get(change_url(decision))
    assert page.context["workflow"]["undo_label"] == "Redo “Reject”"
    assert ">Undo of “Reject”</td>" in page.content.decode()
    admin_client.post(action_url(decision, "undo"))
    page = admin_client.get(change_url(decision))
    assert Decision.objects.get(pk=decision.pk).state == "rejected"
    assert page.context["workflow"]["undo_label"] == "Undo “Reject”"
    assert ">Redo of “Reject”</td>" in page.content.decode()


def test_undo_refusals_are_admin_messages_in_words(admin_client):
    decision = Decision.objects.create()
    decision.hold(actor="someone")
    response = admin_client.post(action_url(decision, "undo"), follow=True)
    said = [str(m) for m in response.context["messages"]]
    assert said == ["Undo refused: its last move cannot be undone."]


def test_an_undo_by_someone_else_is_refused_with_the_reason_in_words(client, admin_client):
    decision = Decision.objects.create()
    admin_client.post(action_url(decision, "reject"))
    other = User.objects.create_superuser("other", password="pw")
    client.force_login(other)
    assert client.get(change_url(decision)).context["workflow"]["undo_url"] == ""
    response = client.post(action_url(decision, "undo"))
    assert response.status_code == 302  # a refusal, not a forbidden request
    said = [str(m) for m in client.get(response.url).context["messages"]]
    assert said == ["Undo refused: only the person who made the move may undo it."]
    assert Decision.objects.get(pk=decision.pk).state == "rejected"


def test_pending_deadlines_show_their_due_time_in_the_workflows_zone_and_how_far_away(
    admin_client, time_machine
):
    time_machine.move_to(datetime(2026, 11, 30, 15, 0, tzinfo=UTC), tick=False)
    proposal = Proposal.objects.create()
    pending = admin_client.get(change_url(proposal)).context["workflow"]["pending"]
    assert pending[0] == {"text": "Reminder due Wed 2 Dec 15:00 (in 2 d)", "overdue": False}


def test_a_deadline_reads_in_the_records_zone_and_says_when_it_is_overdue(time_machine):
    time_machine.move_to(datetime(2026, 11, 27, 15, 0, tzinfo=UTC), tick=False)  # a Friday
    claim = Claim.objects.create()  # Zagreb, business days
    [reminder] = [d for d in claim.pending_deadlines() if d.name == "reminder"]
    assert describe_deadline(reminder, claim) == "Reminder due Wed 2 Dec 16:00 CET (in 5 d)"
    later = reminder.due_at + timedelta(hours=5, minutes=10)
    assert describe_deadline(reminder, claim, now=later).endswith("(overdue by 5 h 10 min)")


def test_long_histories_are_paginated_newest_first(admin_client):
    decision = Decision.objects.create()
    for _ in range(15):
        decision.hold(actor="a")
        decision.release(actor="a")
    first = admin_client.get(change_url(decision)).context["workflow"]["history"]
    assert (first.paginator.count, len(first.object_list)) == (31, 20)
    assert (
        first.object_list[0].to_state == "pending"
        and first.object_list[0].transition_name == "release"
    )
    last = admin_client.get(change_url(decision), {"history_page": 2}).context["workflow"][
        "history"
    ]
    assert last.object_list[-1].triggered_by == "initial"


def test_a_record_in_a_step_no_longer_declared_shows_a_warning_and_no_buttons(admin_client):
    decision = Decision.objects.create()
    Decision.objects.filter(pk=decision.pk).update(state="retired_step")
    page = admin_client.get(change_url(decision))
    assert page.status_code == 200
    assert (page.context["workflow"]["actions"], page.context["workflow"]["pending"]) == ([], [])
    assert "which the workflow no longer declares" in page.content.decode()
    response = admin_client.post(action_url(decision, "approve"))
    assert Decision.objects.get(pk=decision.pk).state == "retired_step"
    assert response.status_code in (302, 403)


@pytest.fixture
def decision_viewer(client):
    """May view decisions, without change_decision; no policy guards decisions."""
    return logged_in_viewer(client, "view_decision")


def test_view_only_staff_see_no_buttons_and_cannot_move_a_record(client, decision_viewer):
    decision = Decision.objects.create()
    page = client.get(change_url(decision))
    assert page.status_code == 200
    assert (page.context["workflow"]["actions"], page.context["workflow"]["undo_url"]) == ([], "")
    assert "data-transition" not in page.content.decode()
    assert client.post(action_url(decision, "reject")).status_code == 403
    assert client.get(action_url(decision, "approve")).status_code == 403  # the form, too
    assert client.post(f"/admin/testapp/decision/{decision.pk}/workflow/undo/").status_code == 403
    assert Decision.objects.get(pk=decision.pk).state == "pending"
    assert TransitionLog.objects.filter(object_id=str(decision.pk)).count() == 1  # initial only


def test_a_transition_post_needs_the_csrf_token(admin_user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    decision = Decision.objects.create()
    assert client.post(action_url(decision, "reject")).status_code == 403
    assert Decision.objects.get(pk=decision.pk).state == "pending"


def test_a_transition_keeps_the_changelist_filters_on_its_way_back(admin_client):
    decision = Decision.objects.create()
    kept = {"_changelist_filters": "state=pending"}
    page = admin_client.get(change_url(decision), kept)
    [hold] = [a for a in page.context["workflow"]["actions"] if a["name"] == "hold"]
    assert hold["url"].endswith("?_changelist_filters=state%3Dpending")
    response = admin_client.post(hold["url"])
    assert response["Location"] == change_url(decision) + "?_changelist_filters=state%3Dpending"
    assert Decision.objects.get(pk=decision.pk).state == "held"


def test_history_times_read_to_the_second_in_the_records_zone_named_once(
    admin_client, time_machine
):
    time_machine.move_to(datetime(2026, 6, 1, 9, 30, 15, tzinfo=UTC), tick=False)
    decision = Decision.objects.create()  # the workflow's zone: UTC
    with timezone.override("Europe/Zagreb"):
        html = admin_client.get(change_url(decision)).content.decode()
    assert "2026-06-01 09:30:15" in html and html.count("Times in UTC.") == 1


def test_the_changelist_filters_by_step_and_shows_the_next_deadline(admin_client, time_machine):
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), tick=False)
    Proposal.objects.create()
    page = admin_client.get("/admin/testapp/proposal/")
    assert page.context["cl"].filter_specs[0].title == "step"  # "By step", as the panel says
    assert "Reminder due Wed 3 Jun 09:00" in page.content.decode()
    assert "workflow-overdue" not in page.content.decode()
    time_machine.move_to(datetime(2026, 6, 4, 9, 0, tzinfo=UTC), tick=False)
    page = admin_client.get("/admin/testapp/proposal/", {"state": "review"})
    assert page.context["cl"].result_count == 1
    assert (
        '<span class="workflow-overdue">Reminder due Wed 3 Jun 09:00 (overdue by 1 d)</span>'
        in page.content.decode()
    )


def test_a_halted_automatic_step_says_why_and_offers_retry_now(admin_client, time_machine):
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), tick=False)
    sync = Sync.objects.create(broken=True)  # Retry(max_attempts=2, backoff="10s"), no on_error
    run_step(Sync, sync.pk, "pushing")
    page = admin_client.get(change_url(sync))
    attempt = page.context["workflow"]["attempt"]
    assert (attempt["attempts"], attempt["halted"], attempt["retry_url"]) == (1, False, "")
    assert "next attempt with the worker's poll at 2026-06-01 09:01:00" in page.content.decode()
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, 10, tzinfo=UTC), tick=False)
    run_step(Sync, sync.pk, "pushing")
    page = admin_client.get(change_url(sync))
    attempt = page.context["workflow"]["attempt"]
    assert attempt["halted"] and "ConnectionError: remote refused" in page.content.decode()
    listed = admin_client.get("/admin/testapp/sync/").content.decode()
    assert '<span class="workflow-overdue">halted</span>' in listed  # its row says so too
    Sync.objects.filter(pk=sync.pk).update(broken=False)
    admin_client.post(attempt["retry_url"])  # queued on django-q2; the test cluster runs it inline
    assert Sync.objects.get(pk=sync.pk).state == "pushed"


def halted_effect(time_machine):
    """A shipment that moved on while its entry into packing owed a label, which failed
    every attempt (``Retry(max_attempts=3, backoff="1m")``)."""
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), tick=False)
    shipment = Shipment.objects.create(printer_offline=True)  # its task never queued
    shipment.ship()
    for minutes in (0, 2, 4):
        time_machine.move_to(datetime(2026, 6, 1, 9, minutes, tzinfo=UTC), tick=False)
        run_due_work()
    return shipment


def notes(response):
    return [str(message) for message in response.context["messages"]]


def test_a_halted_on_enter_effect_says_why_and_retry_now_runs_it_again(admin_client, time_machine):
    shipment = halted_effect(time_machine)
    page = admin_client.get(change_url(shipment))
    [effect] = page.context["workflow"]["halted_effects"]
    assert (effect["step_label"], effect["attempts"]) == ("Packing", 3)
    html = page.content.decode()
    assert "On entry into Packing at 2026-06-01 09:00:00: halted after 3 attempt(s)" in html
    assert "ConnectionError: printer offline" in html
    Shipment.objects.filter(pk=shipment.pk).update(printer_offline=False)
    retry = page.context["workflow"]["effect_retry_url"]
    done = admin_client.post(retry, {"effect": effect["id"]}, follow=True)
    assert notes(done) == ["Packing on entry: queued again."]  # run inline by the test cluster
    assert Shipment.objects.get(pk=shipment.pk).labels_printed == 1
    assert not PendingEffect.objects.exists()
    assert done.context["workflow"]["halted_effects"] == []
    again = admin_client.post(retry, {"effect": effect["id"]}, follow=True)
    assert notes(again) == [f"Nothing to retry: that effect of {shipment} is not halted."]


def test_a_halted_on_enter_effect_counts_as_halted_where_its_record_is_now(
    admin_client, time_machine
):
    shipment = halted_effect(time_machine)
    shipments = overview_rows(admin_client.get(OVERVIEW), "Shipments")
    assert (shipments["shipped"]["row"].halted, shipments["packing"]["row"].halted) == (1, 0)
    halted = admin_client.get(shipments["shipped"]["halted_url"])
    assert [s.pk for s in halted.context["cl"].result_list] == [shipment.pk]


def test_view_only_staff_see_a_halted_effect_without_retry_now(client, time_machine):
    shipment = halted_effect(time_machine)
    user = User.objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_shipment"))
    client.force_login(user)
    page = client.get(change_url(shipment))
    [effect] = page.context["workflow"]["halted_effects"]
    assert page.context["workflow"]["effect_retry_url"] == ""
    assert "Retry now" not in page.content.decode()
    url = change_url(shipment).replace("/change/", "/workflow/retry-effect/")
    assert client.post(url, {"effect": effect["id"]}).status_code == 403
    assert PendingEffect.objects.get().due_at is None


def test_labels_name_the_step_its_buttons_the_message_and_the_history(admin_client):
    decision = Decision.objects.create()
    page = admin_client.get(change_url(decision))
    labels = {a["name"]: a["label"] for a in page.context["workflow"]["actions"]}
    assert labels == {"approve": "Approve", "reject": "Reject", "hold": "Put on hold"}
    assert ">Put on hold</button>" in page.content.decode()
    admin_client.post(action_url(decision, "hold"))
    page = admin_client.get(change_url(decision))
    assert "Put on hold: now in On hold." in [str(m) for m in page.context["messages"]]
    assert page.context["workflow"]["current_label"] == "On hold"
    assert '<span class="workflow-current" data-step="held">On hold</span>' in (
        page.content.decode()
    )
    newest = page.context["workflow"]["history"][0]
    assert (newest.from_label, newest.to_label) == ("Pending", "On hold")
    assert dict(Decision._meta.get_field("state").choices)["held"] == "On hold"


def test_a_move_into_a_final_step_asks_for_confirmation_first(admin_client):
    ticket = Ticket.objects.create()
    page = admin_client.get(change_url(ticket))
    close = next(a for a in page.context["workflow"]["actions"] if a["name"] == "close")
    assert close["asks"] and f'href="{close["url"]}"' in page.content.decode()
    confirm = admin_client.get(action_url(ticket, "close"))
    assert confirm.status_code == 200
    assert "to Closed, a final step" in confirm.content.decode()
    assert Ticket.objects.get(pk=ticket.pk).state == "new"
    admin_client.post(action_url(ticket, "close"))
    assert Ticket.objects.get(pk=ticket.pk).state == "closed"


def test_the_transition_form_has_the_admins_widgets_and_a_breadcrumb(admin_client):
    from example_project.dunning.models import Subscription

    subscription = Subscription.objects.create()
    url = f"/admin/dunning/subscription/{subscription.pk}/workflow/payment_failed/"
    html = admin_client.get(url).content.decode()
    assert 'class="vDateField"' in html and 'class="vTimeField"' in html
    assert "admin/js/admin/DateTimeShortcuts.js" in html
    change = f"/admin/dunning/subscription/{subscription.pk}/change/"
    assert f'&rsaquo; <a href="{change}">' in html
    assert 'value="Payment failed"' in html


# The "Workflows" overview -----------------------------------------------------------------

OVERVIEW = "/admin/django_workflow/workflowoverview/"


def overview_rows(page, model_name):
    model = next(m for m in page.context["models"] if m["name"] == model_name)
    return {step["row"].step: step for step in model["steps"]}


def test_the_overview_counts_records_overdue_and_halted_per_step(admin_client, time_machine):
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), tick=False)
    Proposal.objects.create()
    Proposal.objects.create()
    sync = Sync.objects.create(broken=True)
    run_step(Sync, sync.pk, "pushing")
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, 10, tzinfo=UTC), tick=False)
    run_step(Sync, sync.pk, "pushing")
    pushed = Sync.objects.create()
    run_step(Sync, pushed.pk, "pushing")
    time_machine.move_to(datetime(2026, 6, 4, 9, 0, tzinfo=UTC), tick=False)
    late = Proposal.objects.create()  # entered now: nothing due yet

    page = admin_client.get(OVERVIEW)
    assert page.status_code == 200
    review = overview_rows(page, "Proposals")["review"]
    assert (review["row"].records, review["row"].overdue, review["row"].halted) == (3, 2, 0)
    assert review["waiting"] == "3 d"
    assert review["row"].oldest_entry == datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    syncs = overview_rows(page, "Syncs")
    assert (syncs["pushing"]["row"].records, syncs["pushing"]["row"].halted) == (1, 1)
    assert (syncs["pushed"]["row"].records, syncs["pushed"]["row"].halted) == (1, 0)

    overdue = admin_client.get(review["overdue_url"])
    assert late.pk not in [p.pk for p in overdue.context["cl"].result_list]
    assert overdue.context["cl"].result_count == 2
    halted = admin_client.get(syncs["pushing"]["halted_url"])
    assert [s.pk for s in halted.context["cl"].result_list] == [sync.pk]


def test_business_day_deadlines_are_overdue_only_once_due_in_the_records_calendar(
    client, admin_user, time_machine
):
    zagreb = ZoneInfo("Europe/Zagreb")
    time_machine.move_to(datetime(2026, 12, 23, 10, 0, tzinfo=zagreb), tick=False)  # Wednesday
    Claim.objects.create()  # reminder after 3 business days: 25th and 26th are holidays
    time_machine.move_to(datetime(2026, 12, 28, 11, 0, tzinfo=zagreb), tick=False)
    client.force_login(admin_user)
    review = overview_rows(client.get(OVERVIEW), "Claims")["review"]
    assert (review["row"].records, review["row"].overdue) == (1, 0)  # due Wed 30th 10:00
    time_machine.move_to(datetime(2026, 12, 30, 10, 0, 1, tzinfo=zagreb), tick=False)
    review = overview_rows(client.get(OVERVIEW), "Claims")["review"]
    assert review["row"].overdue == 1


def test_the_overview_lists_only_models_the_user_may_view(client):
    logged_in_viewer(client, "view_decision")
    Decision.objects.create()
    page = client.get(OVERVIEW)
    assert [m["name"] for m in page.context["models"]] == ["Decisions"]
    assert 'href="/admin/testapp/decision/?state__exact=pending"' in page.content.decode()
    index = client.get("/admin/").content.decode()
    assert f'href="{OVERVIEW}"' in index


def test_a_step_no_longer_declared_appears_in_the_overview(admin_client):
    decision = Decision.objects.create()
    Decision.objects.filter(pk=decision.pk).update(state="archived")
    rows = overview_rows(admin_client.get(OVERVIEW), "Decisions")
    assert (rows["archived"]["row"].records, rows["archived"]["row"].declared) == (1, False)


def test_an_admin_may_hide_transitions_and_then_refuses_them(rf, admin_user):
    from django.contrib.admin.sites import AdminSite

    from django_workflow.admin import WorkflowAdminMixin

    class NoHoldAdmin(WorkflowAdminMixin, admin.ModelAdmin):
        def get_workflow_transitions(self, request, record):
            return [n for n in super().get_workflow_transitions(request, record) if n != "hold"]

    model_admin = NoHoldAdmin(Decision, AdminSite())
    decision = Decision.objects.create()
    request = rf.get("/")
    request.user = admin_user
    actions = model_admin.workflow_panel(request, decision)["actions"]
    assert [a["name"] for a in actions] == ["approve", "reject"]
    post = rf.post("/")
    post.user = admin_user
    with pytest.raises(PermissionDenied):
        model_admin.workflow_transition_view(post, str(decision.pk), "hold")
    assert Decision.objects.get(pk=decision.pk).state == "pending"


def test_the_overview_shows_no_log_row_of_its_own(admin_client):
    Decision.objects.create()
    row = TransitionLog.objects.get()
    for tail in (f"{row.pk}/change/", f"{row.pk}/history/", "add/"):
        assert admin_client.get(f"{OVERVIEW}{tail}").status_code == 404


def test_a_form_never_offers_a_value_of_an_earlier_round(admin_client):
    from example_project.dunning.models import Subscription

    subscription = Subscription.objects.create()
    subscription.payment_failed(grace_ends_at=timezone.now() + timedelta(days=1))
    subscription.pay()
    url = f"/admin/dunning/subscription/{subscription.pk}/workflow/payment_failed/"
    form = admin_client.get(url).context["form"]
    assert form["grace_ends_at"].value() is None
    assert admin_client.post(url, {}).context["form"].errors  # empty: refused again


def test_the_changelist_loads_the_stylesheet_that_marks_overdue_deadlines(admin_client):
    page = admin_client.get("/admin/testapp/proposal/")
    assert "/static/django_workflow/workflow.css" in page.content.decode()


def test_the_admin_fills_in_values_from_the_user_and_never_asks_for_them(admin_client, monkeypatch):
    decision = Decision.objects.create()
    decision_admin = admin.site._registry[Decision]

    def signed(self, request, record, transition):
        return {"note": request.user.get_username()} if transition.name == "approve" else {}

    monkeypatch.setattr(type(decision_admin), "get_workflow_transition_values", signed)
    url = f"/admin/testapp/decision/{decision.pk}/"
    actions = admin_client.get(f"{url}change/").context["workflow"]["actions"]
    assert (actions[0]["name"], actions[0]["asks"]) == ("approve", False)
    admin_client.post(f"{url}workflow/approve/", {"step": "pending", "note": "typed"})
    assert Decision.objects.get(pk=decision.pk).note == "admin"  # typed text is ignored


def test_the_panel_counts_the_approvals_of_a_quorum_transition(client):
    from example_project.approvals.models import Document

    first = User.objects.create_superuser("ana", "ana@example.com", "pw")
    second = User.objects.create_superuser("bo", "bo@example.com", "pw")
    document = Document.objects.create(title="Budget").submit()
    url = f"/admin/approvals/document/{document.pk}/"
    client.force_login(first)
    assert "“Approve”: 0 of 2 approvals" in client.get(f"{url}change/").content.decode()
    # The first vote does not move the record: no warning of a final step, and it says so.
    assert "final step" not in client.get(f"{url}workflow/approve/").content.decode()
    voted = client.post(f"{url}workflow/approve/", {"step": "in_review"}, follow=True)
    said = [str(m) for m in voted.context["messages"]]
    assert said == ["Your vote for “Approve” is recorded (1 of 2)."]
    page = client.get(f"{url}change/")
    assert "“Approve”: 1 of 2 approvals: ana" in page.content.decode()
    assert [a["name"] for a in page.context["workflow"]["actions"]] == ["request_changes"]
    assert client.post(f"{url}workflow/approve/", {"step": "in_review"}).status_code == 403
    client.force_login(second)
    assert "final step" in client.get(f"{url}workflow/approve/").content.decode()
    client.post(f"{url}workflow/approve/", {"step": "in_review"})
    document.refresh_from_db()
    assert document.state == "approved"
    assert client.get(f"{url}change/").context["workflow"]["votes"] == []


# Confirming, commenting and stale buttons ---------------------------------------------------


def messages_after(client, response):
    return [str(m) for m in client.get(response.url).context["messages"]]


def test_the_back_out_control_is_a_link_named_back_not_a_button_named_cancel(admin_client):
    from example_project.fulfilment.models import Order

    order = Order.objects.create(item="lamp")
    Order._base_manager.filter(pk=order.pk).update(state="payment_failed")
    page = admin_client.get(f"/admin/fulfilment/order/{order.pk}/workflow/cancel/")
    html = page.content.decode()
    assert 'type="submit" class="default" value="Cancel"' in html  # the transition
    change = f"/admin/fulfilment/order/{order.pk}/change/"
    assert f'<a href="{change}" class="workflow-back">Back</a>' in html
    assert "closelink" not in html and ">Cancel</a>" not in html


def test_a_confirmation_page_takes_an_optional_comment_kept_in_the_history(admin_client):
    ticket = Ticket.objects.create()
    page = admin_client.get(action_url(ticket, "close"))
    assert '<label for="id_workflow-comment">Reason / comment:</label>' in page.content.decode()
    admin_client.post(
        action_url(ticket, "close"), {"step": "new", "workflow-comment": "duplicate of #4"}
    )
    row = ticket.history().last()
    assert (row.to_state, row.comment) == ("closed", "duplicate of #4")


def test_the_values_form_takes_a_comment_too_and_keeps_it_on_an_error(admin_client):
    decision = Decision.objects.create()
    page = admin_client.post(action_url(decision, "approve"), {"workflow-comment": "why"})
    assert page.context["comment_form"]["comment"].value() == "why"  # shown again, not lost
    admin_client.post(action_url(decision, "approve"), {"note": "ok", "workflow-comment": "why"})
    assert decision.history().get(transition_name="approve").comment == "why"


def test_a_comment_that_cannot_be_kept_is_asked_again_and_nothing_moves(admin_client):
    ticket = Ticket.objects.create()
    page = admin_client.post(
        action_url(ticket, "close"), {"step": "new", "workflow-comment": "dup\x00licate"}
    )
    assert page.status_code == 200 and page.context["comment_form"].errors
    assert "Null characters are not allowed." in page.content.decode()
    assert Ticket.objects.get(pk=ticket.pk).state == "new"


def test_a_transition_button_pressed_twice_answers_with_a_message(admin_client):
    decision = Decision.objects.create()
    admin_client.post(action_url(decision, "hold"), {"step": "pending"})
    response = admin_client.post(action_url(decision, "hold"), {"step": "pending"})
    assert response.status_code == 302
    assert messages_after(admin_client, response)[-1] == (
        f"Nothing done: {decision} changed since the page was shown; it is in On hold now."
    )
    assert decision.history().filter(transition_name="hold").count() == 1


def test_a_transition_whose_condition_no_longer_holds_answers_with_a_message(admin_client):
    expense = Expense.objects.create(amount=100)  # fast_track needs amount < 50
    response = admin_client.post(action_url(expense, "fast_track"), {"step": "submitted"})
    assert response.status_code == 302  # stale, not forbidden: a policy refusal stays 403
    said = messages_after(admin_client, response)
    assert said == ["“Fast track” is not possible now. Its condition is not met."]
    assert Expense.objects.get(pk=expense.pk).state == "submitted"


def test_a_record_moved_while_the_button_runs_answers_as_a_stale_page_not_in_code_words(
    admin_client, monkeypatch
):
    decision = Decision.objects.create()
    decision_admin = admin.site._registry[Decision]
    own_values = type(decision_admin).get_workflow_transition_values

    def moved_meanwhile(self, request, record, transition):
        Decision._base_manager.filter(pk=record.pk).update(state="held")  # another writer
        return own_values(self, request, record, transition)

    monkeypatch.setattr(type(decision_admin), "get_workflow_transition_values", moved_meanwhile)
    response = admin_client.post(action_url(decision, "hold"), {"step": "pending"})
    assert response.status_code == 302
    assert messages_after(admin_client, response)[-1] == (
        f"Nothing done: {decision} changed since the page was shown; it is in On hold now."
    )
    assert not decision.history().filter(transition_name="hold").exists()


def test_a_record_deleted_while_the_button_runs_answers_with_a_message(admin_client, monkeypatch):
    decision = Decision.objects.create()
    decision_admin = admin.site._registry[Decision]
    own_values = type(decision_admin).get_workflow_transition_values

    def deleted_meanwhile(self, request, record, transition):
        Decision._base_manager.filter(pk=record.pk).delete()  # another writer
        return own_values(self, request, record, transition)

    monkeypatch.setattr(type(decision_admin), "get_workflow_transition_values", deleted_meanwhile)
    response = admin_client.post(action_url(decision, "hold"), {"step": "pending"})
    assert response.status_code == 302 and response.url == "/admin/testapp/decision/"
    said = [str(m) for m in admin_client.get(response.url).context["messages"]]
    assert said == [f"Nothing done: {decision} no longer exists."]


def test_retry_now_pressed_twice_answers_with_a_message(admin_client, time_machine):
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), tick=False)
    sync = Sync.objects.create(broken=True)
    run_step(Sync, sync.pk, "pushing")
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, 10, tzinfo=UTC), tick=False)
    run_step(Sync, sync.pk, "pushing")  # halted
    Sync.objects.filter(pk=sync.pk).update(broken=False)
    retry = admin_client.get(change_url(sync)).context["workflow"]["attempt"]["retry_url"]
    admin_client.post(retry)  # runs inline: the record moves on to pushed
    response = admin_client.post(retry)
    assert response.status_code == 302
    assert messages_after(admin_client, response)[-1] == (
        f"Nothing to retry: {sync} is in Pushed, not halted."
    )


def test_an_undo_button_pressed_twice_does_not_redo(admin_client):
    decision = Decision.objects.create()
    admin_client.post(action_url(decision, "reject"))
    row = admin_client.get(change_url(decision)).context["workflow"]["undo_row"]
    admin_client.post(action_url(decision, "undo"), {"row": row})
    response = admin_client.post(action_url(decision, "undo"), {"row": row})
    assert messages_after(admin_client, response)[-1].startswith("Nothing done:")
    assert Decision.objects.get(pk=decision.pk).state == "pending"
    assert decision.history().filter(triggered_by="undo").count() == 1


def test_undo_when_nothing_can_be_undone_answers_with_a_message(admin_client):
    decision = Decision.objects.create()
    response = admin_client.post(action_url(decision, "undo"))
    said = messages_after(admin_client, response)
    assert said == ["Undo refused: nothing has moved this record yet."]


def test_a_redo_into_a_final_step_confirms_like_the_action_it_repeats(admin_client):
    from example_project.hiring.models import Candidate as Applicant

    applicant = Applicant.objects.create(name="Ada")
    Applicant._base_manager.filter(pk=applicant.pk).update(state="decision")
    base = f"/admin/hiring/candidate/{applicant.pk}/"
    admin_client.post(f"{base}workflow/reject/", {"step": "decision"})  # after "Reject…" asked
    admin_client.post(f"{base}workflow/undo/")
    page = admin_client.get(f"{base}change/")
    panel = page.context["workflow"]
    assert (panel["undo_label"], panel["undo_asks"]) == ("Redo “Reject”", True)
    link = f"{panel['undo_url']}?row={panel['undo_row']}"
    assert f'href="{link}">Redo “Reject”…</a>' in page.content.decode()
    confirm = admin_client.get(link).content.decode()
    assert f"Redo “Reject” moves {applicant} to Rejected, a final step" in confirm
    assert 'value="Redo “Reject”"' in confirm and 'class="workflow-back">Back</a>' in confirm
    assert Applicant.objects.get(pk=applicant.pk).state == "decision"
    admin_client.post(panel["undo_url"], {"row": panel["undo_row"]})
    assert Applicant.objects.get(pk=applicant.pk).state == "rejected"


def test_a_redo_is_not_offered_once_the_window_of_the_move_has_passed(admin_client, time_machine):
    time_machine.move_to(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), tick=False)
    decision = Decision.objects.create()
    admin_client.post(action_url(decision, "reject"))
    time_machine.move_to(datetime(2026, 6, 1, 9, 20, tzinfo=UTC), tick=False)
    admin_client.post(action_url(decision, "undo"))
    time_machine.move_to(datetime(2026, 6, 1, 9, 30, 1, tzinfo=UTC), tick=False)
    assert admin_client.get(change_url(decision)).context["workflow"]["undo_url"] == ""
    refused = "Redo refused: the time allowed to undo the move (30m) has passed."
    response = admin_client.post(action_url(decision, "undo"))
    assert messages_after(admin_client, response)[-1] == refused
    response = admin_client.get(action_url(decision, "undo"))  # a confirmation link, stale
    assert messages_after(admin_client, response)[-1] == refused
    assert Decision.objects.get(pk=decision.pk).state == "pending"


def test_no_undo_is_offered_once_the_entered_steps_work_has_started(admin_client):
    from django_workflow.engine.attempts import start_attempt

    decision = Decision.objects.create()
    admin_client.post(action_url(decision, "approve"), {"note": "ok"})  # into checking
    assert admin_client.get(change_url(decision)).context["workflow"]["undo_url"]
    decision.refresh_from_db()
    work = Decision.workflow.work("step:checking")
    start_attempt(Decision, decision.pk, work, decision.state_entered_at, timezone.now(), "default")
    assert admin_client.get(change_url(decision)).context["workflow"]["undo_url"] == ""
    response = admin_client.post(action_url(decision, "undo"))
    assert messages_after(admin_client, response)[-1] == (
        "Undo refused: the step it entered has already started its work."
    )
    assert Decision.objects.get(pk=decision.pk).state == "checking"
