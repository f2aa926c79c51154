"""Support tickets with a resolution SLA in Croatian business hours (docs/slas.md), end to
end with time travel."""

import re
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User

from django_workflow import WorkflowPermissionDenied
from django_workflow.models import TransitionLog
from example_project.support.models import Ticket
from tests.helpers import fresh, local

staff = SimpleNamespace(is_staff=True, is_active=True)
HOUR = timedelta(hours=1)


@pytest.mark.parametrize(
    "priority, team, queue",
    [
        ("urgent", "billing", "urgent"),
        ("normal", "billing", "billing"),
        ("normal", "technical", "technical"),
    ],
)
def test_triage_routes_by_priority_then_team(clock, priority, team, queue):
    ticket = Ticket.objects.create(subject="Help", team=team)
    ticket.triage(priority=priority)
    assert fresh(ticket).state == queue


def test_the_resolution_sla_counts_croatian_business_hours(clock):
    clock.at(local(2026, 12, 24, 10))  # Thursday; 25 and 26 December are holidays
    ticket = Ticket.objects.create(subject="Printer")
    ticket.triage()
    # 08:00-16:00: Thursday 6 h, Monday 8 h, then 2 h on Tuesday make 16 of 24.
    clock.at(local(2026, 12, 29, 10) - timedelta(seconds=1))
    assert fresh(ticket).sla_warnings == 0
    clock.at(local(2026, 12, 29, 10))
    assert fresh(ticket).sla_warnings == 1
    clock.at(local(2026, 12, 30, 10))  # 24 h: breached, so escalated to the urgent queue
    assert (fresh(ticket).state, fresh(ticket).sla("resolution").state) == ("urgent", "breached")


def test_waiting_on_the_customer_pauses_the_sla_and_the_reply_never_restarts_it(clock):
    clock.at(local(2026, 12, 1, 9))  # a Tuesday
    ticket = Ticket.objects.create(subject="Export")
    clock.at(local(2026, 12, 1, 10))
    ticket.triage()
    clock.at(local(2026, 12, 1, 12))
    fresh(ticket).ask_customer()  # 3 h consumed: new 1 h, technical 2 h
    clock.at(local(2026, 12, 7, 15))  # the customer answers the following Monday
    waited = fresh(ticket).sla("resolution")
    assert (waited.state, waited.consumed, waited.due_at) == ("paused", 3 * HOUR, None)
    assert fresh(ticket).sla_warnings == 0
    fresh(ticket).customer_replied()
    clock.at(local(2026, 12, 7, 16))
    resumed = fresh(ticket).sla("resolution")
    assert (resumed.state, resumed.consumed, resumed.remaining) == ("running", 4 * HOUR, 20 * HOUR)
    # 16 h: Monday 1 h, Tuesday 8 h, Wednesday 4 h; restarted, it would warn at 15:00.
    warning, breach = local(2026, 12, 9, 12), local(2026, 12, 10, 12)
    assert resumed.due_at == breach
    clock.at(warning - timedelta(seconds=1))
    assert fresh(ticket).sla_warnings == 0
    for instant in (warning, local(2026, 12, 9, 15), breach - timedelta(seconds=1)):
        clock.at(instant)
        assert (fresh(ticket).state, fresh(ticket).sla_warnings) == ("technical", 1)
    clock.at(breach)
    assert (fresh(ticket).state, fresh(ticket).sla_warnings) == ("urgent", 1)
    assert fresh(ticket).sla("resolution").consumed == 24 * HOUR
    rows = TransitionLog.objects.filter(object_id=str(ticket.pk))
    warned = rows.filter(transition_name="resolution.warn")
    escalated = rows.get(transition_name="escalate")
    assert (warned.count(), escalated.occurred_at) == (1, breach)
    assert escalated.data == {"sla": "resolution", "alarm": "breach"}


def test_urgent_tickets_warn_at_two_hours_and_breach_at_four(clock):
    ticket = Ticket.objects.create(subject="Down", priority="urgent")
    ticket.triage()
    clock.after(timedelta(hours=2))
    assert fresh(ticket).sla_warnings == 1
    clock.after(timedelta(hours=2))
    assert fresh(ticket).state == "breached"


def test_a_breached_ticket_goes_to_management_when_its_three_working_days_are_up(clock):
    clock.at(local(2026, 12, 1, 9))  # a Tuesday
    ticket = Ticket.objects.create(subject="Site down", priority="urgent")
    ticket.triage()
    clock.at(local(2026, 12, 1, 13))  # four hours: breached, and the clock runs on there
    assert (fresh(ticket).state, fresh(ticket).sla("resolution").state) == ("breached", "running")
    breach = local(2026, 12, 4, 9)  # 24 h: Tuesday 7, Wednesday 8, Thursday 8, Friday 1
    clock.at(breach - timedelta(seconds=1))
    assert (fresh(ticket).state, fresh(ticket).sla_warnings) == ("breached", 2)  # 2 h, 16 h
    clock.at(breach)
    assert fresh(ticket).state == "management"


def test_escalate_means_something_different_in_each_step(clock):
    ticket = Ticket.objects.create(subject="Refund", team="billing")
    ticket.triage()
    with pytest.raises(WorkflowPermissionDenied):
        fresh(ticket).escalate(actor=SimpleNamespace(is_staff=False))
    fresh(ticket).escalate(actor=staff)
    assert fresh(ticket).state == "urgent"
    fresh(ticket).escalate(actor=staff)
    assert fresh(ticket).state == "management"
    manager = User.objects.create_user("mia")
    with pytest.raises(WorkflowPermissionDenied, match="claim it first"):
        fresh(ticket).resolve(actor=manager)
    fresh(ticket).claim(manager)
    fresh(ticket).resolve(actor=manager)
    assert fresh(ticket).state == "resolved"
    assert fresh(ticket).assignee is None  # left the step: nobody holds it


def test_tickets_waiting_on_the_customer_are_checked_every_30_days(clock):
    ticket = Ticket.objects.create(subject="Question")
    ticket.triage()
    fresh(ticket).ask_customer()
    clock.after(timedelta(days=30))
    clock.after(timedelta(days=30))
    assert (fresh(ticket).state, fresh(ticket).stale_flags) == ("waiting_on_customer", 2)
    fresh(ticket).customer_replied()
    assert fresh(ticket).state == "technical"


def test_customers_who_owe_an_answer_are_reminded_on_three_working_mornings(clock):
    clock.at(local(2026, 12, 23, 10))  # a Wednesday, after the 09:00 reminder
    ticket = Ticket.objects.create(subject="Export")
    ticket.triage()
    fresh(ticket).ask_customer()
    reminded = []
    for day in range(24, 32):  # 25 and 26 December are holidays, then a weekend
        clock.at(local(2026, 12, day, 9))
        if fresh(ticket).customer_reminders > len(reminded):
            reminded.append(day)
    assert reminded == [24, 28, 29]  # then it stops: three per wait
    assert "customer_reminder" not in [d.name for d in fresh(ticket).pending_deadlines()]
    fresh(ticket).customer_replied()
    fresh(ticket).ask_customer()  # waiting again: three more
    assert fresh(ticket).pending_deadlines()[0].due_at == local(2027, 1, 4, 9)


def test_the_admin_shows_each_tickets_resolution_sla_and_the_overview_counts_them(clock, client):
    clock.at(local(2026, 11, 26, 9))  # a Thursday: 24 h by Tuesday 09:00
    late = Ticket.objects.create(subject="Late")
    late.triage()
    clock.at(local(2026, 12, 1, 9))
    running = Ticket.objects.create(subject="Running")
    waiting = Ticket.objects.create(subject="Waiting")
    waiting.triage()
    clock.at(local(2026, 12, 1, 11, 50))
    fresh(waiting).ask_customer()
    client.force_login(User.objects.create_superuser("lead"))  # a session of this instant
    html = client.get("/admin/support/ticket/").content.decode()
    assert '<th scope="col" class="column-workflow_slas">' in html
    column = dict(re.findall(r'>(\w+)</a></th>.*?class="field-workflow_slas">([^<]*)<', html))
    assert column == {
        "Late": "breached",
        "Running": "21 h 10 min left",
        "Waiting": "paused, 21 h 10 min left",
    }
    assert {fresh(late).state, running.state} == {"urgent", "new"}  # late: escalated
    overview = client.get("/admin/django_workflow/workflowoverview/").content.decode()
    assert "SLA “Resolution”: 2 running, 1 paused, 1 breached" in overview  # late runs on


def test_a_new_tickets_clock_reads_in_working_hours_and_its_warning_is_a_deadline(clock, client):
    clock.at(local(2026, 12, 1, 8))  # a Tuesday, at opening
    Ticket.objects.create(subject="Fresh")
    client.force_login(User.objects.create_superuser("lead"))
    html = client.get("/admin/support/ticket/").content.decode()
    column = dict(re.findall(r'>(\w+)</a></th>.*?class="field-workflow_slas">([^<]*)<', html))
    assert column == {"Fresh": "24 h left"}  # three working days of 8 h, not "1 d"
    # 16 working hours: Tuesday's and Wednesday's
    assert "SLA “Resolution”: warning due Wed 2 Dec 16:00" in html


def test_the_agents_ticket_page_shows_the_resolution_clock(clock, client, user_with):
    clock.at(local(2026, 12, 1, 8))  # a Tuesday, at opening
    ticket = Ticket.objects.create(subject="Export")
    ticket.triage()
    clock.at(local(2026, 12, 1, 10, 30))
    client.force_login(user_with("agent", "view_ticket", "change_ticket"))
    page = client.get(f"/agent/tickets/{ticket.pk}/").content.decode()
    assert 'data-state="running">SLA “Resolution”: 21 h 30 min left</li>' in page
    fresh(ticket).ask_customer()
    page = client.get(f"/agent/tickets/{ticket.pk}/").content.decode()
    assert 'data-state="paused">SLA “Resolution”: paused, 21 h 30 min left</li>' in page
