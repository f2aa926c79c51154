"""SLA alarms fired by the worker process itself (docs/slas.md): ``manage.py
workflow_worker --once`` finds a due warning and breach through the stored
``next_due_at`` and fires each once, however often it runs."""

from datetime import timedelta

import pytest
from django.utils import timezone

from django_workflow.models import TransitionLog
from tests.processes import run_once
from tests.testapp.models import Inquiry

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_worker_fires_a_late_clocks_warning_and_breach_once():
    inquiry = Inquiry.objects.create()
    # arrived three weeks ago: far past 16 working hours and 4 calendar hours
    weeks_ago = timezone.now() - timedelta(days=21)
    Inquiry.objects.filter(pk=inquiry.pk).update(state_entered_at=weeks_ago)
    assert Inquiry.objects.get(pk=inquiry.pk).next_due_at <= timezone.now()
    for _ in range(2):
        result = run_once()
        assert result.returncode == 0, result.stderr
    inquiry = Inquiry.objects.get(pk=inquiry.pk)
    assert (inquiry.state, inquiry.warnings) == ("escalated", 1)
    assert inquiry.sla_first_answer_breached_at is not None
    names = TransitionLog.objects.filter(object_id=str(inquiry.pk), triggered_by="timeout")
    assert sorted(names.values_list("transition_name", flat=True)) == [
        "escalate",
        "first_answer.breach",
        "nudge",
        "resolution.warn",
    ]
