"""Support tickets with SLAs in Croatian business days, end to end with time travel."""

from datetime import datetime, timedelta
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User

from django_workflow import WorkflowPermissionDenied
from example_project.support.models import Ticket

ZAGREB = ZoneInfo("Europe/Zagreb")
staff = SimpleNamespace(is_staff=True, is_active=True)


def fresh(ticket):
    return Ticket.objects.get(pk=ticket.pk)


def local(*args):
    return datetime(*args, tzinfo=ZAGREB)


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


def test_the_technical_sla_counts_croatian_business_days(clock):
    clock.at(local(2026, 12, 24, 10))  # Thursday; 25 and 26 December are holidays
    ticket = Ticket.objects.create(subject="Printer")
    ticket.triage()
    clock.at(local(2026, 12, 29, 10) - timedelta(seconds=1))
    assert fresh(ticket).sla_warnings == 0
    clock.at(local(2026, 12, 29, 10))  # two business days: Mon 28, Tue 29
    assert fresh(ticket).sla_warnings == 1
    clock.at(local(2026, 12, 30, 10))
    assert fresh(ticket).state == "breached"


def test_billing_has_a_shorter_sla(clock):
    clock.at(local(2026, 6, 5, 15))  # a Friday
    ticket = Ticket.objects.create(subject="Invoice", team="billing")
    ticket.triage()
    clock.at(local(2026, 6, 8, 15))  # Monday: one business day
    assert fresh(ticket).sla_warnings == 1
    clock.at(local(2026, 6, 9, 15))
    assert fresh(ticket).state == "breached"


def test_urgent_tickets_warn_at_two_hours_and_breach_at_four(clock):
    ticket = Ticket.objects.create(subject="Down", priority="urgent")
    ticket.triage()
    clock.after(timedelta(hours=2))
    assert fresh(ticket).sla_warnings == 1
    clock.after(timedelta(hours=2))
    assert fresh(ticket).state == "breached"


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
