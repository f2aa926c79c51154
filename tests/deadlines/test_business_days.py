"""Business days: weekdays that are not holidays, in a time zone (docs/deadlines.md)."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import holidays
import pytest

from django_workflow.durations import (
    BusinessDays,
    add_duration,
    holiday_calendar,
    nth_working_day,
)
from django_workflow.scheduling import due_at
from django_workflow.testing import run_due_work
from tests.helpers import ZAGREB, local
from tests.testapp.models import Claim, NationalClaim

pytestmark = pytest.mark.django_db

SECOND = timedelta(seconds=1)


def enter(clock, instant, model=Claim, **fields):
    clock.move_to(instant, tick=False)
    return model.objects.create(**fields)


def run_at(clock, instant):
    clock.move_to(instant, tick=False)
    run_due_work()


def work(model, name):
    return next(w for w in model.workflow.works if w.entity == name)


@pytest.mark.parametrize(
    "entered, due",
    [
        (local(2026, 12, 18, 16), local(2026, 12, 23, 16)),  # Friday: Mon, Tue, Wed
        (local(2026, 12, 25, 16), local(2026, 12, 30, 16)),  # Friday, a holiday
        (local(2026, 12, 24, 16), local(2026, 12, 30, 16)),  # Thursday before the holidays
    ],
)
def test_three_business_days_land_on_the_right_local_day_at_the_same_time(
    time_machine, entered, due
):
    claim = enter(time_machine, entered)
    assert due_at(work(Claim, "reminder"), claim) == due
    run_at(time_machine, due - SECOND)
    assert Claim.objects.get().reminders == 0
    run_at(time_machine, due)
    assert Claim.objects.get().reminders == 1


def test_the_friday_example_is_due_wednesday_at_16_in_zagreb(time_machine):
    claim = enter(time_machine, local(2026, 12, 25, 16))
    [reminder] = [d for d in claim.pending_deadlines() if d.name == "reminder"]
    due = reminder.due_at.astimezone(ZAGREB)
    assert (due.strftime("%A"), due.hour, due.minute) == ("Wednesday", 16, 0)


def test_a_business_day_deadline_across_a_clock_change_keeps_its_local_time(time_machine):
    entered = local(2026, 3, 27, 16)  # Friday, UTC+1; clocks go forward on Sunday 29 March
    claim = enter(time_machine, entered)
    due = due_at(work(Claim, "reminder"), claim)
    assert due == local(2026, 4, 1, 16)
    assert due.astimezone(UTC).hour == 14  # UTC+2 now
    assert due - entered == timedelta(days=5, hours=-1)
    run_at(time_machine, due - SECOND)
    assert Claim.objects.get().reminders == 0
    run_at(time_machine, due)
    assert Claim.objects.get().reminders == 1


def test_a_business_day_transition_timeout_moves_the_record(time_machine):
    claim = enter(time_machine, local(2026, 12, 24, 10))
    # Thu 24: Fri 25 and Sat 26 are holidays -> Mon 28 (1) ... Thu 31 (4), Fri 1 Jan (5)
    run_at(time_machine, local(2027, 1, 1, 10) - SECOND)
    assert Claim.objects.get(pk=claim.pk).state == "review"
    run_at(time_machine, local(2027, 1, 1, 10))
    assert Claim.objects.get(pk=claim.pk).state == "escalated"


def test_only_due_records_fire_among_pre_filtered_candidates(time_machine):
    early = enter(time_machine, local(2026, 12, 24, 9))  # due Wed 30 09:00
    late = enter(time_machine, local(2026, 12, 27, 18))  # Sunday: due Wed 30 18:00
    run_at(time_machine, local(2026, 12, 30, 12))
    reminders = dict(Claim.objects.values_list("pk", "reminders"))
    assert reminders == {early.pk: 1, late.pk: 0}


def test_a_national_calendar_from_the_holidays_package(time_machine):
    claim = enter(time_machine, local(2026, 12, 24, 9), NationalClaim, tz="Europe/Zagreb")
    due = due_at(work(NationalClaim, "escalation"), claim)
    assert due == local(2026, 12, 28, 9)  # 25 and 26 December are Croatian holidays
    run_at(time_machine, local(2026, 12, 25, 9))
    assert NationalClaim.objects.get().state == "review"
    run_at(time_machine, due)
    assert NationalClaim.objects.get().state == "escalated"


def test_the_time_zone_comes_from_the_record_and_falls_back_to_the_workflow(time_machine):
    tokyo = enter(
        time_machine, datetime(2026, 6, 5, 20, tzinfo=UTC), NationalClaim, tz="Asia/Tokyo"
    )
    utc = NationalClaim.objects.create(tz="")
    # In Tokyo it is already Saturday 05:00; the next business day is Monday.
    assert due_at(work(NationalClaim, "escalation"), tokyo) == datetime(
        2026, 6, 8, 5, tzinfo=ZoneInfo("Asia/Tokyo")
    )
    assert due_at(work(NationalClaim, "escalation"), utc) == datetime(2026, 6, 8, 20, tzinfo=UTC)


def test_holidays_accept_a_calendar_or_dates():
    thursday = datetime(2026, 12, 24, 9, tzinfo=UTC)
    croatia = holidays.country_holidays("HR")
    assert add_duration(thursday, BusinessDays(1), UTC, croatia).day == 28
    assert add_duration(thursday, BusinessDays(1), UTC, holiday_calendar(None)).day == 25
    dates = holiday_calendar(["2026-12-25"])
    assert add_duration(thursday, BusinessDays(1), UTC, dates).day == 28


def test_a_holiday_added_to_a_calendar_after_it_answered_counts():
    calendar = holiday_calendar([])
    friday = date(2026, 12, 4)
    assert nth_working_day(calendar, friday, 1) == date(2026, 12, 7)
    calendar[date(2026, 12, 7)] = "Company day"
    assert nth_working_day(calendar, friday, 1) == date(2026, 12, 8)
