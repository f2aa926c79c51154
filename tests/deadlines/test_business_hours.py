"""Business hours (``bh``): time inside ``Workflow.working_hours`` on business days, in
the record's time zone, minus holidays (docs/durations.md)."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from django_workflow import Step, Timeout, Transition
from django_workflow.checks import check_model
from django_workflow.durations import (
    BusinessHours,
    InvalidDuration,
    add_working_time,
    holiday_calendar,
    parse_duration,
    parse_timedelta,
    parse_working_hours,
    working_time_between,
)
from django_workflow.scheduling import due_at
from django_workflow.testing import run_due_work
from tests.helpers import ZAGREB, local
from tests.testapp.models import Inquiry

NEW_YORK = ZoneInfo("America/New_York")
NINE_TO_FIVE = parse_working_hours("09:00-17:00")
CHRISTMAS = holiday_calendar([date(2026, 12, 24), date(2026, 12, 25)])
SECOND = timedelta(seconds=1)


def later(instant, hours, zone=ZAGREB, calendar=CHRISTMAS, working=NINE_TO_FIVE):
    return add_working_time(instant, timedelta(hours=hours), zone, calendar, working)


def between(start, end, zone=ZAGREB, calendar=CHRISTMAS, working=NINE_TO_FIVE):
    return working_time_between(start, end, zone, calendar, working)


def test_bh_reads_as_business_hours():
    assert parse_duration("16bh") == BusinessHours(16)
    assert parse_duration((3, "business_hours")) == BusinessHours(3)


@pytest.mark.parametrize("value", ["0bh", "-2bh", "1.5bh"])
def test_a_bh_that_is_not_a_positive_whole_number_is_refused(value):
    with pytest.raises(InvalidDuration):
        parse_duration(value)


def test_business_hours_are_no_calendar_time():
    with pytest.raises(InvalidDuration, match="'2bh': business hours are only for deadlines"):
        parse_timedelta("2bh")


@pytest.mark.parametrize(
    "value", ["9-17", "17:00-09:00", "09:00-09:00", "09:00-24:30", "09:61-17:00", None]
)
def test_working_hours_that_cannot_be_read_are_refused(value):
    with pytest.raises(InvalidDuration):
        parse_working_hours(value)


def test_working_hours_may_end_at_midnight():
    whole_day = parse_working_hours("00:00-24:00")
    assert whole_day.end - whole_day.start == timedelta(hours=24)


@pytest.mark.parametrize(
    "start, hours, due",
    [
        # inside one working day
        (local(2026, 12, 1, 10), 3, local(2026, 12, 1, 13)),
        # across a night: Tuesday 15:00 + 4 bh is Wednesday 11:00
        (local(2026, 12, 1, 15), 4, local(2026, 12, 2, 11)),
        # before opening: the clock starts at 09:00
        (local(2026, 12, 1, 6), 2, local(2026, 12, 1, 11)),
        # after closing: the clock starts the next morning
        (local(2026, 12, 1, 20), 2, local(2026, 12, 2, 11)),
        # across a weekend: Friday 16:00 + 2 bh is Monday 10:00
        (local(2026, 12, 4, 16), 2, local(2026, 12, 7, 10)),
        # on a Saturday: Monday morning
        (local(2026, 12, 5, 12), 1, local(2026, 12, 7, 10)),
        # across holidays: Wednesday 23 Dec 16:00 + 2 bh skips 24, 25 and the weekend
        (local(2026, 12, 23, 16), 2, local(2026, 12, 28, 10)),
        # exactly a working day ends at that day's closing
        (local(2026, 12, 1, 9), 8, local(2026, 12, 1, 17)),
        # sixteen hours: two whole working days
        (local(2026, 12, 1, 9), 16, local(2026, 12, 2, 17)),
    ],
)
def test_business_hours_count_working_hours_only(start, hours, due):
    assert later(start, hours) == due
    assert between(start, due) == timedelta(hours=hours)


def test_working_hours_keep_the_local_time_across_a_clock_change():
    # Zagreb moves to summer time on Sunday 29 March 2026: Friday 16:00 CET (15:00 UTC)
    # plus 2 bh is Monday 10:00 CEST, 08:00 UTC.
    due = later(local(2026, 3, 27, 16), 2)
    assert due == datetime(2026, 3, 30, 8, tzinfo=UTC)
    assert due.astimezone(ZAGREB).hour == 10


def test_a_working_day_holding_a_clock_change_is_an_hour_shorter():
    # Cairo springs forward at midnight on Friday 24 April 2026, a working day there
    cairo = ZoneInfo("Africa/Cairo")
    whole_day = parse_working_hours("00:00-24:00")
    friday = (local(2026, 4, 24, zone=cairo), local(2026, 4, 25, zone=cairo))
    thursday = (local(2026, 4, 23, zone=cairo), local(2026, 4, 24, zone=cairo))
    assert between(*thursday, zone=cairo, working=whole_day) == timedelta(hours=24)
    assert between(*friday, zone=cairo, working=whole_day) == timedelta(hours=23)
    assert later(friday[0], 23, zone=cairo, working=whole_day) == friday[1]


def test_the_same_hours_in_another_zone_are_other_instants():
    start = datetime(2026, 12, 1, 15, tzinfo=UTC)  # 16:00 in Zagreb, 10:00 in New York
    assert later(start, 2) == local(2026, 12, 2, 10)
    assert later(start, 2, zone=NEW_YORK) == local(2026, 12, 1, 12, zone=NEW_YORK)


def test_no_working_time_lies_between_an_instant_and_an_earlier_one():
    assert between(local(2026, 12, 2, 10), local(2026, 12, 1, 10)) == timedelta(0)


pytestmark_db = pytest.mark.django_db


def nudge():
    return next(w for w in Inquiry.workflow.works if w.entity == "nudge")


@pytestmark_db
def test_a_bh_timeout_fires_after_four_working_hours_in_the_records_zone(time_machine):
    time_machine.move_to(local(2026, 12, 4, 15), tick=False)  # Friday 15:00 in Zagreb
    inquiry = Inquiry.objects.create()
    due = local(2026, 12, 7, 11)  # Friday 15-17, Monday 09-11
    assert due_at(nudge(), inquiry) == due
    time_machine.move_to(due - SECOND, tick=False)
    run_due_work()
    assert Inquiry.objects.get().nudges == 0
    time_machine.move_to(due, tick=False)
    run_due_work()
    run_due_work()
    assert Inquiry.objects.get(pk=inquiry.pk).nudges == 1


@pytestmark_db
def test_a_bh_timeout_counts_the_working_hours_of_the_zone_the_record_names(time_machine):
    time_machine.move_to(local(2026, 12, 4, 15), tick=False)  # Friday 09:00 in New York
    inquiry = Inquiry.objects.create(zone="America/New_York")
    assert due_at(nudge(), inquiry) == local(2026, 12, 4, 13, zone=NEW_YORK)


@pytestmark_db
def test_a_bh_timeout_skips_the_holidays(time_machine):
    time_machine.move_to(local(2026, 12, 23, 15), tick=False)  # Wednesday before Christmas
    inquiry = Inquiry.objects.create()
    assert due_at(nudge(), inquiry) == local(2026, 12, 28, 11)


def test_unreadable_working_hours_are_an_error(declare):
    class Workflow:
        working_hours = "9 to 5"
        start = Step(Transition("finish", to="done"))
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E067" and "09:00-17:00" in error.hint


def test_business_hours_without_working_hours_are_an_error(declare):
    class Workflow:
        start = Step(
            Transition("finish", to="done"),
            Timeout("nudge", fire_after="4bh", transition_to="done"),
        )
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E068" and "start.nudge" in error.msg
    Workflow.working_hours = "09:00-17:00"
    assert check_model(declare(Workflow)) == []


def test_other_working_hours_make_the_worker_compute_the_due_instants_again(declare):
    from django_workflow.work.due_instants import fingerprint

    class Workflow:
        working_hours = "09:00-17:00"
        start = Step(Timeout("nudge", fire_after="4bh", transition_to="done"))
        done = Step()

    before = fingerprint(declare(Workflow))
    Workflow.working_hours = "08:00-16:00"
    assert fingerprint(declare(Workflow)) != before
