"""Time in step: the report read from the transition log (docs/report.md).

The fixture moves three appeals through their steps at known instants (the log's
times come from the travelled clock), so every figure below is worked out by hand
in the comments. The week: Monday 2026-06-01 to Wednesday 2026-06-10; Thursday
2026-06-04 is the appeals' holiday; Zagreb is UTC+2, New York UTC-4 in June.
"""

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from django_workflow.firing import run_work
from django_workflow.report import ReportError, non_working_spans, time_in_step
from tests.moments import T
from tests.testapp.models import Appeal, Claim, Ticket

pytestmark = pytest.mark.django_db

NEW_YORK = "America/New_York"
#: The report's end in most tests: Wednesday 2026-06-10 09:00 UTC.
END = T + timedelta(days=9)


def at(day, hour, minute=0):
    """An instant of June 2026, in UTC."""
    return datetime(2026, 6, day, hour, minute, tzinfo=UTC)


def fire_due(clock, instant):
    clock.move_to(instant, tick=False)
    for work in Appeal.workflow.works:
        run_work(Appeal, work.name)


@pytest.fixture
def week(clock):
    """Three appeals through one week; returns them by name.

    a (Zagreb, the workflow's zone): review Mon 09:00 → waiting Mon 11:00 → review
      Fri 09:00 → decided Tue 06-09 09:00, still there at the end.
    b (New York): review Mon 09:00; the reminder fires Tue 09:00; the escalation moves
      it Thu 09:00 → escalated; decided Mon 06-08 13:00.
    c (Zagreb, named on the record): review Fri 12:00 → decided Mon 06-08 12:00.
    """
    a = Appeal.objects.create()
    b = Appeal.objects.create(tz=NEW_YORK)
    clock.move_to(at(1, 11), tick=False)
    a.ask()
    fire_due(clock, at(2, 9))  # b's reminder, one day after it entered review
    fire_due(clock, at(4, 9))  # b's escalation, three days after
    clock.move_to(at(5, 9), tick=False)
    a.answer()
    clock.move_to(at(5, 12), tick=False)
    c = Appeal.objects.create(tz="Europe/Zagreb")
    clock.move_to(at(8, 12), tick=False)
    c.decide()
    clock.move_to(at(8, 13), tick=False)
    b.refresh_from_db()
    b.decide()
    clock.move_to(at(9, 9), tick=False)
    a.decide()
    clock.move_to(END, tick=False)
    return {"a": a, "b": b, "c": c}


def by_step(report):
    return {figures.step: figures for figures in report.steps}


def test_the_week_in_calendar_hours(week):
    steps = by_step(time_in_step(Appeal, since=T, until=END))
    review = steps["review"]
    # a 2 h and 96 h, b 72 h, c 72 h: sorted 2, 72, 72, 96.
    assert (review.stays, review.open) == (4, 0)
    assert review.median_hours == pytest.approx(72)
    assert review.p90_hours == pytest.approx(72 + 0.7 * 24)  # rank 1 + 3 × 0.9 = 3.7
    assert (steps["waiting"].stays, steps["waiting"].median_hours) == (1, pytest.approx(94))
    assert steps["escalated"].median_hours == pytest.approx(100)  # Thu 09:00 to Mon 13:00
