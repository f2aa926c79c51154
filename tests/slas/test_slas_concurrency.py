"""SLA alarms fired by several workers at once on PostgreSQL (docs/slas.md): each worker
on a connection of its own runs the same poll at the same instant; the row lock lets
one fire each alarm, once, and the others skip it."""

import pytest
from django.db import connection

from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from tests.helpers import local
from tests.races import at_once
from tests.testapp.models import Inquiry

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]

WORKERS = 4


def polled_at_once():
    """``WORKERS`` threads, each polling every due deadline once, released together; what
    any of them raised (the test names any surprise)."""

    def poll():
        run_due_work()

    return [failure for failure in at_once([poll] * WORKERS) if failure is not None]


def alarms(name):
    rows = TransitionLog.objects.filter(transition_name=name)
    return list(rows.values_list("object_id", "triggered_by"))


def test_a_warning_and_a_breach_fire_once_each_across_workers(time_machine):
    time_machine.move_to(local(2026, 12, 1, 9), tick=False)
    inquiries = [Inquiry.objects.create() for _ in range(5)]
    time_machine.move_to(local(2026, 12, 2, 13), tick=False)  # 12 business hours: warned
    assert polled_at_once() == []
    assert [i.warnings for i in Inquiry.objects.order_by("pk")] == [1] * 5
    expected = [(str(i.pk), "timeout") for i in inquiries]
    assert sorted(alarms("resolution.warn")) == expected
    time_machine.move_to(local(2026, 12, 2, 17), tick=False)  # 16: breached, escalated
    assert polled_at_once() == []
    assert polled_at_once() == []
    assert {i.state for i in Inquiry.objects.all()} == {"escalated"}
    assert sorted(alarms("escalate")) == expected
    assert [i.warnings for i in Inquiry.objects.order_by("pk")] == [1] * 5
