"""A service level's warning and breach among the record's deadlines (docs/slas.md): the
running clock's next alarm is a pending deadline wherever deadlines are shown, a fired
alarm's log row says which SLA it was, and a clock counted in business hours reads in
working hours, never in days.

``Inquiry`` (tests/testapp/models/slas.py) counts resolution in 16 business hours, 09:00-17:00
in Zagreb, warning the lead at 12 and escalating at 16; its first answer is due four
calendar hours after arrival, running only while it is new.
"""

import pytest
from django.contrib.auth.models import Permission, User
from django.template import Context, Template
from django.test import RequestFactory
from rest_framework.test import APIClient

from django_workflow.reading.wording import row_label
from django_workflow.testing import advance_to_next_deadline, run_due_work
from tests.helpers import fresh, local
from tests.testapp.models import Inquiry

pytestmark = pytest.mark.django_db


def pending(inquiry):
    return [(d.name, d.kind, d.due_at, d.target, str(d.label)) for d in inquiry.pending_deadlines()]


@pytest.fixture
def at(time_machine):
    def move(instant):
        time_machine.move_to(instant, tick=False)

    return move


@pytest.fixture
def taken(at):
    """An inquiry that arrived on Tuesday 1 December at 09:00 and was taken at once: its
    first answer's clock never ran, its resolution's runs while it is worked on."""
    at(local(2026, 12, 1, 9))
    inquiry = Inquiry.objects.create()
    inquiry.take()
    return fresh(inquiry)


def test_a_running_clock_shows_its_next_alarm_among_the_deadlines(at):
    at(local(2026, 12, 1, 9))  # a Tuesday
    inquiry = Inquiry.objects.create()
    warning = local(2026, 12, 2, 13)  # 12 of 16 business hours: Tuesday 8, Wednesday 4
    assert pending(fresh(inquiry)) == [
        ("nudge", "action", local(2026, 12, 1, 13), "nudge", "Nudge"),
        ("first_answer.breach", "sla", local(2026, 12, 1, 13), "", "SLA “First answer”: breach"),
        ("resolution.warn", "sla", warning, "warn_lead", "SLA “Resolution”: warning"),
    ]  # the resolution's breach waits for its warning to fire


def test_advancing_to_the_next_deadline_reaches_the_warning_then_the_breach(at, taken):
    assert advance_to_next_deadline(taken) == local(2026, 12, 2, 13)
    assert (taken.warnings, taken.state) == (1, "working")
    assert pending(taken)[0] == (
        "resolution.breach",
        "sla",
        local(2026, 12, 2, 17),  # 16 business hours
        "escalate",
        "SLA “Resolution”: breach",
    )
    assert advance_to_next_deadline(taken) == local(2026, 12, 2, 17)
    assert (taken.state, taken.sla("resolution").state) == ("escalated", "breached")
    assert pending(taken) == []  # both fired: nothing more to wait for
    assert advance_to_next_deadline(taken) is None


def test_a_paused_clock_holds_no_deadline(at, taken):
    at(local(2026, 12, 1, 11))
    taken.ask()
    assert fresh(taken).sla("resolution").state == "paused"
    assert pending(fresh(taken)) == []


def test_a_fired_alarm_is_no_longer_pending(at):
    at(local(2026, 12, 1, 9))
    inquiry = Inquiry.objects.create()
    at(local(2026, 12, 1, 13))
    run_due_work()  # nudged, and the first answer's breach marked
    names = [name for name, *_ in pending(fresh(inquiry))]
    assert names == ["resolution.warn"]


def test_the_log_names_each_fired_alarm_by_its_sla(at, taken):
    at(local(2026, 12, 2, 17))
    run_due_work()  # warns, then escalates
    at(local(2026, 12, 1, 9))
    marked = Inquiry.objects.create()
    at(local(2026, 12, 1, 13))
    run_due_work()  # the first answer's breach calls nothing: it is only marked
    workflow = Inquiry.workflow
    fired = [row for row in fresh(taken).history() if row.triggered_by == "timeout"]
    assert [row.transition_name for row in fired] == ["resolution.warn", "escalate"]
    labels = [row_label(workflow, row) for row in fired]
    assert labels == ["SLA “Resolution” warned", "SLA “Resolution” breached"]
    breach = [r for r in fresh(marked).history() if r.transition_name == "first_answer.breach"]
    assert row_label(workflow, breach[0]) == "SLA “First answer” breached"


def viewer():
    user, _ = User.objects.get_or_create(username="agent")
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="testapp", codename="view_inquiry")
    )
    return User.objects.get(pk=user.pk)


def tag(text, record):
    request = RequestFactory().get("/inquiries/")
    request.user = viewer()
    template = Template("{% load workflow %}" + text)
    return template.render(Context({"request": request, "record": record}))


def test_the_template_tags_show_the_alarm_to_come_and_the_alarms_fired(at, taken):
    deadlines = tag("{% workflow_deadlines record %}", taken)
    assert "SLA “Resolution”: warning due Wed 2 Dec 13:00" in deadlines
    at(local(2026, 12, 2, 13))
    run_due_work()
    history = tag("{% workflow_history record %}", fresh(taken))
    assert "SLA “Resolution” warned" in history and "Resolution.warn" not in history


def test_the_rest_state_lists_the_next_alarm(taken):
    api = APIClient()
    api.force_authenticate(User.objects.create_user("ann"))
    state = api.get(f"/api/inquiries/{taken.pk}/workflow/").json()
    assert state["pending_deadlines"][0] == {
        "name": "resolution.warn",
        "label": "SLA “Resolution”: warning",
        "kind": "sla",
        "due_at": "2026-12-02T12:00:00Z",
        "target": "warn_lead",
    }


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("lead", password="pw"))
    return client


def test_the_changelist_names_the_next_alarm_and_counts_working_time_in_hours(at, staff):
    at(local(2026, 12, 1, 9))
    inquiry = Inquiry.objects.create()
    inquiry.take()
    at(local(2026, 12, 1, 10))
    html = staff.get("/admin/testapp/inquiry/").content.decode()
    assert "Resolution: 15 h left" in html  # 16 business hours are two working days
    assert "SLA “Resolution”: warning due Wed 2 Dec 13:00" in html


def test_the_slas_tag_shows_each_clock_to_whom_may_view_the_record(at, taken):
    at(local(2026, 12, 1, 10))
    clocks = tag("{% workflow_slas record %}", taken)
    assert 'data-sla="resolution" data-state="running">SLA “Resolution”: 15 h left' in clocks
    assert 'data-sla="first_answer" data-state="paused">SLA “First answer”: paused, 4 h left' in (
        clocks
    )
    request = RequestFactory().get("/inquiries/")
    request.user = User.objects.create_user("stranger")
    template = Template("{% load workflow %}{% workflow_slas record %}")
    assert template.render(Context({"request": request, "record": taken})) == ""


def test_the_slas_tag_shows_nothing_for_a_workflow_without_slas():
    from tests.testapp.models import Ticket

    request = RequestFactory().get("/tickets/")
    request.user = User.objects.create_superuser("lead")
    context = Context({"request": request, "record": Ticket.objects.create()})
    assert "workflow-actions" in Template(
        "{% load workflow %}{% workflow_actions record %}"
    ).render(context)  # the user sees the record
    assert Template("{% load workflow %}{% workflow_slas record %}").render(context) == ""
