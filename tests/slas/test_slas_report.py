"""Service levels in ``workflow_report`` (docs/slas.md#in-the-report): per SLA, the clocks
that stopped at a terminal step in the window (met, breached, median consumed) and the
open ones now (running, paused, already breached)."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command

from django_workflow.report import time_in_step
from django_workflow.testing import run_due_work
from tests.helpers import local
from tests.testapp.models import Inquiry

pytestmark = pytest.mark.django_db


@pytest.fixture
def week(time_machine):
    """Five inquiries from Tuesday 1 December: resolved after 2, 4 and 20 business hours,
    one waiting on the customer, one new; the worker ran throughout."""

    def at(instant):
        time_machine.move_to(instant, tick=False)

    at(local(2026, 12, 1, 9))
    quick, slow, late, waiting, _new = (Inquiry.objects.create() for _ in range(5))
    at(local(2026, 12, 1, 11))
    quick.resolve()
    at(local(2026, 12, 1, 13))
    slow.resolve()
    waiting.take()
    waiting.ask()
    for day in (2, 3):
        at(local(2026, 12, day, 17))
        run_due_work()  # late and new breach on Wednesday at 17:00 and are escalated
    at(local(2026, 12, 3, 13))
    Inquiry.objects.get(pk=late.pk).resolve()
    at(local(2026, 12, 4, 9))
    return local(2026, 12, 1), local(2026, 12, 4, 9)


def test_the_report_counts_met_breached_running_and_paused_clocks(week):
    since, until = week
    report = time_in_step(Inquiry, since, until)
    resolution, first_answer = report.slas
    assert (resolution.name, resolution.target) == ("resolution", "16bh")
    assert (resolution.met, resolution.breached, resolution.median_hours) == (2, 1, 4.0)
    assert (resolution.running, resolution.paused, resolution.breached_open) == (1, 1, 1)
    # the first answer: 2 h for quick, 4 h (the whole target) for slow, late breached
    assert (first_answer.met, first_answer.breached) == (1, 2)


def test_the_command_prints_a_line_per_sla(week):
    since, until = week
    out = io.StringIO()
    call_command(
        "workflow_report", "testapp.Inquiry", "--since", "2026-12-01", "--until",
        "2026-12-04T09:00", stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[-2] == (
        "SLA resolution (16bh): stopped in the window 3 (met 2, breached 1, median consumed "
        "4.0 h); open now 2 (running 1, paused 1, breached 1)"
    )
    assert lines[-1].startswith("SLA first_answer (4h): stopped in the window 3 (met 1,")
    assert since < until - timedelta(days=1)
