"""What people read in the admin: labels instead of names, triggers in words, the
record's name, and one time zone per screen, named once (docs/admin.md)."""

import re
from datetime import UTC, datetime

import pytest
from django.contrib.contenttypes.models import ContentType
from django.utils import translation

from django_workflow import Step, Timeout, Transition
from django_workflow.admin import describe_deadline
from django_workflow.models import TransitionLog
from django_workflow.reading.wording import row_label, trigger_words
from django_workflow.testing import advance_to_next_deadline, run_due_work
from example_project.support.models import Ticket as SupportTicket
from tests.testapp.models import Appeal, Claim, Decision, Shipment, Sync

pytestmark = pytest.mark.django_db

LOG = "/admin/django_workflow/transitionlog/"


def cells(html, column):
    """The text of each row's cell in ``column`` of a changelist (its ``field-`` class)."""
    found = re.findall(rf'<t[dh] class="field-{column}[^"]*">(.*?)</t[dh]>', html, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", cell).split()) for cell in found]


def headers(html):
    table = html.split('id="result_list"')[1]
    return [
        re.sub(r"<[^>]+>", "", header).strip()
        for header in re.findall(r'<th scope="col"[^>]*>(.*?)</th>', table, re.S)
    ]


@pytest.fixture
def urgent_ticket(time_machine):
    """A support ticket (Zagreb) triaged as urgent in winter, its SLA warning fired."""
    time_machine.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=UTC), tick=False)
    ticket = SupportTicket.objects.create(subject="Printer on fire")
    ticket.triage(priority="urgent", actor="ana")
    advance_to_next_deadline(ticket, time_machine)  # the SLA warning, 2 h later
    return ticket


# The transition log's admin ----------------------------------------------------------


def test_the_log_admin_has_headers_for_people_and_reads_in_labels(admin_client):
    decision = Decision.objects.create()
    decision.hold(actor="ana")  # "Put on hold", into "On hold"
    html = admin_client.get(LOG).content.decode()
    assert headers(html) == ["When", "Record", "From → to", "Transition", "Trigger", "Actor"]
    assert cells(html, "steps")[:2] == ["Pending → On hold", "Pending"]
    assert cells(html, "transition")[0] == "Put on hold"
    assert cells(html, "trigger")[:2] == ["by a person", "created"]


def test_the_log_admin_names_the_record_and_links_its_page_over_its_model(
    admin_client, urgent_ticket
):
    html = admin_client.get(LOG).content.decode()
    link = f'<a href="/admin/support/ticket/{urgent_ticket.pk}/change/">Printer on fire</a>'
    assert link in html
    assert set(cells(html, "record_link")) == {"Printer on fire Ticket"}


def test_the_log_admin_shows_a_rows_comment_under_its_transition(admin_client):
    decision = Decision.objects.create()
    decision.hold(actor="ana", comment="Waiting for the <b>legal</b> review")
    html = admin_client.get(LOG).content.decode()
    assert (
        cells(html, "transition")[0]
        == "Put on hold “Waiting for the &lt;b&gt;legal&lt;/b&gt; review”"
    )


def test_a_row_that_stays_in_its_step_names_the_step_once(admin_client, urgent_ticket):
    html = admin_client.get(LOG).content.decode()
    assert cells(html, "steps")[:3] == ["Urgent", "New → Urgent", "New"]


def test_triggers_and_deadlines_read_in_words_in_the_log_and_the_history(
    admin_client, urgent_ticket
):
    html = admin_client.get(LOG).content.decode()
    assert cells(html, "trigger")[:3] == ["deadline", "by a person", "created"]
    assert cells(html, "transition")[:2] == ["SLA warning", "Triage"]
    panel = admin_client.get(f"/admin/support/ticket/{urgent_ticket.pk}/change/").content
    history = panel.decode().split('class="workflow-history"')[1]
    assert ">SLA warning</td><td>deadline</td>" in history
    assert "sla_warning</td>" not in history and "timeout</td>" not in history


def test_an_on_enter_effect_reads_as_on_entry_not_as_a_deadline(admin_client):
    shipment = Shipment.objects.create()
    run_due_work()  # its label printed on entering packing
    row = TransitionLog.objects.get(object_id=str(shipment.pk), transition_name="on_enter")
    assert trigger_words(row) == "on entry"
    assert cells(admin_client.get(LOG).content.decode(), "trigger")[0] == "on entry"


def test_searching_the_log_by_a_records_name_finds_its_rows(admin_client, urgent_ticket):
    SupportTicket.objects.create(subject="Password reset")
    page = admin_client.get(LOG, {"q": "printer"})
    rows = list(page.context["cl"].result_list)
    assert len(rows) == 3 and {row.object_id for row in rows} == {str(urgent_ticket.pk)}


def test_the_transition_filter_lists_the_transitions_by_label_and_only_them(admin_client):
    decision = Decision.objects.create()
    decision.hold(actor="ana")
    decision.release(actor="ana")
    decision_type = ContentType.objects.get_for_model(Decision).pk
    page = admin_client.get(LOG, {"model": decision_type})
    spec = next(f for f in page.context["cl"].filter_specs if f.title == "transition")
    assert dict(spec.lookup_choices) == {
        "approve": "Approve",
        "reject": "Reject",
        "hold": "Put on hold",
        "release": "Release",
        "reopen": "Reopen",
    }
    held = admin_client.get(LOG, {"model": decision_type, "transition": "hold"})
    assert [row.transition_name for row in held.context["cl"].result_list] == ["hold"]


def test_the_log_admin_reads_in_the_workflows_zone_when_its_rows_share_one(
    admin_client, urgent_ticket
):
    ticket_type = ContentType.objects.get_for_model(SupportTicket).pk
    html = admin_client.get(LOG, {"model": ticket_type}).content.decode()
    assert cells(html, "when")[0] == "2026-12-01 12:00:00"  # 11:00 UTC
    assert html.count("Times in Europe/Zagreb (CET).") == 1
    mixed = admin_client.get(LOG).content.decode()  # workflows of several zones
    assert cells(mixed, "when")[0] == "2026-12-01 11:00:00"
    assert mixed.count("Times in UTC.") == 1


def test_a_log_row_reads_as_its_error_path_step_failure_or_action():
    workflow = Sync.workflow
    row = TransitionLog(
        from_state="pushing", to_state="pushing", transition_name="pushing", triggered_by="halted"
    )
    assert row_label(workflow, row) == "Pushing"
    assert row.get_triggered_by_display() == "halted"
    gone = TransitionLog(from_state="x", to_state="y", transition_name="make_offer")
    assert row_label(None, gone) == "Make offer"
    assert TransitionLog(triggered_by="error_path").get_triggered_by_display() == "error path"
    assert TransitionLog(triggered_by="automatic").get_triggered_by_display() == "by the worker"


# Deadlines ----------------------------------------------------------------------------


def test_a_deadline_reads_as_its_label_in_the_panel(admin_client, time_machine):
    time_machine.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=UTC), tick=False)
    ticket = SupportTicket.objects.create(subject="Printer on fire")
    ticket.triage(priority="urgent")
    first = ticket.pending_deadlines()[0]
    assert (first.name, first.label) == ("sla_warning", "SLA warning")
    panel = admin_client.get(f"/admin/support/ticket/{ticket.pk}/change/").context["workflow"]
    assert [d["text"] for d in panel["pending"]] == [
        "SLA warning due Tue 1 Dec 12:00 (in 2 h)",
        "SLA breach due Tue 1 Dec 14:00 (in 4 h)",
        "SLA “Resolution”: warning due Thu 3 Dec 10:00 (in 2 d)",  # 16 of its 24 working hours
    ]


def test_the_rest_api_gives_each_deadline_its_label_beside_its_name(admin_client, time_machine):
    from tests.testapp.models import Proposal

    time_machine.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=UTC), tick=False)
    proposal = Proposal.objects.create()
    answer = admin_client.get(f"/api/proposals/{proposal.pk}/workflow/").json()
    first = answer["pending_deadlines"][0]
    assert (first["name"], first["label"]) == ("reminder", "Reminder")


def test_a_deadline_in_another_year_carries_the_year(time_machine):
    time_machine.move_to(datetime(2026, 12, 30, 9, 0, tzinfo=UTC), tick=False)
    claim = Claim.objects.create()  # Zagreb, 3 business days; 1 January is a working day here
    [reminder] = [d for d in claim.pending_deadlines() if d.name == "reminder"]
    assert describe_deadline(reminder, claim) == "Reminder due Mon 4 Jan 2027 10:00 CET (in 5 d)"


def test_a_deadline_reads_in_the_active_language(time_machine):
    time_machine.move_to(datetime(2026, 11, 27, 15, 0, tzinfo=UTC), tick=False)
    claim = Claim.objects.create()
    [reminder] = [d for d in claim.pending_deadlines() if d.name == "reminder"]
    with translation.override("de"):
        assert "Mi 2 Dez 16:00" in describe_deadline(reminder, claim)


def test_a_deadline_label_must_be_text():
    from django_workflow.checks.steps_checks import _check_labels

    step = Step(Transition("go", to="done"), Timeout("late", fire_after="1d", label=3))
    errors = list(_check_labels(Decision, "pending", step))
    assert [e.id for e in errors] == ["django_workflow.E031"]
    assert "deadline 'late'" in errors[0].msg


# One zone per screen --------------------------------------------------------------------


def test_the_change_page_reads_in_the_records_zone_named_once(admin_client, urgent_ticket):
    html = admin_client.get(f"/admin/support/ticket/{urgent_ticket.pk}/change/").content.decode()
    assert html.count("Times in Europe/Zagreb (CET).") == 1
    history = html.split('class="workflow-history"')[1]
    assert "2026-12-01 10:00:00" in history and "2026-12-01 12:00:00" in history
    assert "UTC" not in history
    assert "SLA breach due Tue 1 Dec 14:00 (in 2 h)" in html  # no second zone name


def test_the_changelist_reads_in_the_workflows_zone_named_once(admin_client, urgent_ticket):
    html = admin_client.get("/admin/support/ticket/").content.decode()
    assert html.count("Times in Europe/Zagreb (CET).") == 1
    assert cells(html, "workflow_next_deadline") == ["SLA breach due Tue 1 Dec 14:00 (in 2 h)"]
    assert cells(html, "state_entered_at") == ["Dec. 1, 2026, 10 a.m."]  # 09:00 UTC


def test_a_changelist_of_records_in_their_own_zones_names_each_deadlines_zone(
    admin_client, time_machine
):
    time_machine.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=UTC), tick=False)
    Appeal.objects.create(tz="America/New_York")
    html = admin_client.get("/admin/testapp/appeal/").content.decode()
    assert "Times in Europe/Zagreb (CET). Next deadlines in each record" in html
    assert cells(html, "workflow_next_deadline") == ["Reminder due Wed 2 Dec 04:00 EST (in 1 d)"]


def test_the_trigger_labels_need_no_migration_beyond_the_shipped_ones():
    from io import StringIO

    from django.core.management import call_command

    call_command("makemigrations", "django_workflow", "--check", "--dry-run", stdout=StringIO())
