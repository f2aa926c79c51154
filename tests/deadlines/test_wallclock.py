"""Wall-clock schedules (``Every(cron=...)``) and ``times`` (docs/deadlines.md,
"Wall-clock schedules"), fired through the worker's poll.

Every expected instant comes from ``brute_force``: a clock that ticks minute by
minute in UTC and reads the local wall clock with zoneinfo. At each minute, the
wall times the clock passed since the latest one it had shown fire, once: a
skipped wall time fires at the first minute after the gap, a repeated one only
the first time. It shares nothing with the code under test but croniter's
list of the wall times an expression names (naive, no zone) in the last tests.
"""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter_range
from django.contrib.contenttypes.models import ContentType
from django.db.models.signals import post_save
from django.test.utils import isolate_apps

from django_workflow import Every, Step, Transition, WorkflowModel
from django_workflow.models import TransitionLog
from django_workflow.scheduling import due_at
from django_workflow.work.due_instants import fingerprint
from django_workflow.work.wallclock import next_firing
from django_workflow.worker.schedulers.polling import poll
from tests.helpers import fresh
from tests.moments import T
from tests.testapp.models import Standup

MINUTE = timedelta(minutes=1)
SECOND = timedelta(seconds=1)
ZAGREB = ZoneInfo("Europe/Zagreb")
NEW_YORK = ZoneInfo("America/New_York")
HOLIDAYS = {date(2026, 12, 24), date(2026, 12, 25)}  # as Standup declares them


def brute_force(after, until, zone, wanted, working_day=lambda day: True):
    """The instants in ``(after, until]`` at which a wall-clock schedule fires, minute by minute."""
    fired = []
    latest = after.astimezone(zone).replace(tzinfo=None)
    instant = after + MINUTE
    while instant <= until:
        wall = instant.astimezone(zone).replace(tzinfo=None)
        passed = (latest + MINUTE * k for k in range(1, (wall - latest) // MINUTE + 1))
        if any(wanted(w) for w in passed) and working_day(wall.date()):
            fired.append(instant)
        latest = max(latest, wall)
        instant += MINUTE
    return fired


def at_night(wall):
    """``30 1,2 * * *``"""
    return wall.minute == 30 and wall.hour in (1, 2)


def at_nine(wall):
    """``0 9 * * mon-fri``"""
    return (wall.hour, wall.minute) == (9, 0) and wall.weekday() < 5


def at_five(wall):
    """``0 17 * * *``"""
    return (wall.hour, wall.minute) == (17, 0)


def standup_working_day(day):
    return day.weekday() < 5 and day not in HOLIDAYS


def run_poll(clock, instant):
    clock.move_to(instant, tick=False)
    return poll("testapp.Standup", [work.name for work in Standup.workflow.works])


def firings(record, every):
    """When ``every`` fired for ``record``, from its log rows."""
    rows = TransitionLog.objects.filter(
        content_type=ContentType.objects.get_for_model(Standup),
        object_id=str(record.pk),
        transition_name=every,
        triggered_by="timeout",
    )
    return list(rows.order_by("occurred_at").values_list("occurred_at", flat=True))


def walk(clock, record, expected, count):
    """Poll a second before, at, and again at each expected instant: the stored due
    instant names it each time, and the every fires there once."""
    before = getattr(fresh(record), count)
    for done, instant in enumerate(expected):
        assert fresh(record).next_due_at == instant
        run_poll(clock, instant - SECOND)
        assert getattr(fresh(record), count) == before + done
        run_poll(clock, instant)
        run_poll(clock, instant)
        assert getattr(fresh(record), count) == before + done + 1


def drive(clock, record, until):
    """Poll at each stored due instant, as a worker polling every minute would, up to ``until``."""
    while (due := fresh(record).next_due_at) is not None and due <= until:
        run_poll(clock, due)
        run_poll(clock, due)
    return fresh(record)


def entered(clock, start, tz, transition):
    clock.move_to(start, tick=False)
    record = Standup.objects.create(tz=tz)
    if transition:
        getattr(record, transition)()
    return fresh(record)


def local(instants, zone):
    return [instant.astimezone(zone).strftime("%m-%d %H:%M%z") for instant in instants]


pytestmark = pytest.mark.django_db


# Clock changes --------------------------------------------------------------------------

DST_NIGHTS = [
    pytest.param(
        ZAGREB,
        datetime(2026, 3, 28, 12, tzinfo=UTC),
        ["03-29 01:30+0100", "03-29 03:00+0200"],
        id="Zagreb-spring-forward",
    ),
    pytest.param(
        ZAGREB,
        datetime(2026, 10, 24, 12, tzinfo=UTC),
        ["10-25 01:30+0200", "10-25 02:30+0200"],
        id="Zagreb-fall-back",
    ),
    pytest.param(
        NEW_YORK,
        datetime(2026, 3, 7, 12, tzinfo=UTC),
        ["03-08 01:30-0500", "03-08 03:00-0400"],
        id="New-York-spring-forward",
    ),
    pytest.param(
        NEW_YORK,
        datetime(2026, 10, 31, 12, tzinfo=UTC),
        ["11-01 01:30-0400", "11-01 02:30-0500"],
        id="New-York-fall-back",
    ),
]


@pytest.mark.parametrize("zone, start, night_of_the_change", DST_NIGHTS)
def test_a_cron_every_fires_once_per_wall_time_across_a_clock_change(
    clock, zone, start, night_of_the_change
):
    record = entered(clock, start, zone.key, "watch_nights")
    expected = brute_force(start, start + timedelta(days=3), zone, at_night)
    walk(clock, record, expected, "pings")
    assert firings(record, "night") == expected
    assert local(expected, zone)[:2] == night_of_the_change  # skipped: at 03:00; repeated: once
    assert len(expected) == 6  # two a night, whatever the clocks did


def test_a_worker_that_was_down_fires_once_then_keeps_the_schedule(clock):
    start = datetime(2026, 3, 27, 12, tzinfo=UTC)
    record = entered(clock, start, "", "watch_nights")  # the workflow's zone: Zagreb
    back = start + timedelta(days=3)
    assert run_poll(clock, back) == {"every:nightly.night": 1}
    assert run_poll(clock, back) == {}
    after_outage = brute_force(back, back + timedelta(days=1), ZAGREB, at_night)
    assert fresh(record).next_due_at == after_outage[0]
    walk(clock, record, after_outage, "pings")
    assert fresh(record).pings == 1 + len(after_outage)


def test_the_records_own_zone_decides_the_wall_clock(clock):
    start = datetime(2026, 6, 1, 12, tzinfo=UTC)
    zagreb = entered(clock, start, "", "watch_nights")
    new_york = entered(clock, start, "America/New_York", "watch_nights")
    assert zagreb.next_due_at == datetime(2026, 6, 1, 23, 30, tzinfo=UTC)  # 01:30 CEST
    assert new_york.next_due_at == datetime(2026, 6, 2, 5, 30, tzinfo=UTC)  # 01:30 EDT
    new_york.tz = "Europe/Zagreb"
    new_york.save()
    assert fresh(new_york).next_due_at == zagreb.next_due_at


# Working days ---------------------------------------------------------------------------


@pytest.mark.parametrize("zone", [ZAGREB, NEW_YORK], ids=["Zagreb", "New-York"])
def test_business_days_only_skips_weekends_and_the_calendars_holidays(clock, zone):
    start = datetime(2026, 12, 23, 15, tzinfo=UTC)  # a Wednesday afternoon in both zones
    record = entered(clock, start, zone.key, None)
    expected = brute_force(start, start + timedelta(days=8), zone, at_nine, standup_working_day)
    assert [instant.astimezone(zone).date() for instant in expected] == [
        date(2026, 12, 28),  # Thursday 24th and Friday 25th are holidays, then a weekend
        date(2026, 12, 29),
        date(2026, 12, 30),
        date(2026, 12, 31),
    ]
    walk(clock, record, expected, "reminders")
    assert firings(record, "reminder") == expected


def test_without_business_days_only_a_cron_fires_on_holidays(clock):
    start = datetime(2026, 12, 23, 15, tzinfo=UTC)
    record = drive(clock, entered(clock, start, "", "limit"), start + timedelta(days=3))
    digests = brute_force(start, start + timedelta(days=2), ZAGREB, at_five)
    assert firings(record, "digest") == digests
    assert [instant.date() for instant in digests] == [date(2026, 12, 23), date(2026, 12, 24)]


# times and until ------------------------------------------------------------------------


def test_times_stops_an_interval_every_after_n_firings_in_a_round(clock):
    record = entered(clock, T, "", "limit")
    record = drive(clock, record, T + timedelta(days=10))
    assert firings(record, "nudge") == [T + timedelta(days=d) for d in (1, 2, 3)]
    assert record.limited_nudge_fired_count == 3
    assert record.next_due_at is None
    assert record.pending_deadlines() == []


def test_times_counts_cron_firings_and_a_re_entry_starts_a_new_round(clock):
    record = entered(clock, T, "", "limit")
    record = drive(clock, record, T + timedelta(days=5))
    first_round = brute_force(T, T + timedelta(days=2), ZAGREB, at_five)
    assert firings(record, "digest") == first_round
    assert record.limited_digest_fired_count == 2
    clock.move_to(T + timedelta(days=5), tick=False)
    record.again()
    record = fresh(record)
    assert record.limited_digest_fired_count == 2  # until the round's first firing
    assert "digest" in [deadline.name for deadline in record.pending_deadlines()]
    again = T + timedelta(days=5)
    record = drive(clock, record, again + timedelta(hours=9))
    assert record.limited_digest_fired_count == 1
    record = drive(clock, record, again + timedelta(days=5))
    second_round = brute_force(again, again + timedelta(days=2), ZAGREB, at_five)
    assert firings(record, "digest") == first_round + second_round
    assert (record.digests, record.limited_digest_fired_count) == (4, 2)
    assert record.nudges == 6


def test_until_ends_a_cron_every_and_is_never_a_firing_instant(clock):
    record = entered(clock, T, "", "limit")  # 11:00 in Zagreb; until is 14:00
    drive(clock, record, T + timedelta(days=1))
    assert firings(record, "chime") == [T + timedelta(hours=1), T + timedelta(hours=2)]


def test_pending_deadlines_name_the_next_wall_clock_firing(clock):
    record = entered(clock, T, "America/New_York", "watch_nights")
    [night] = record.pending_deadlines()
    assert (night.name, night.kind, night.target) == ("night", "every", "ping")
    assert night.due_at == datetime(2026, 6, 2, 5, 30, tzinfo=UTC) == record.next_due_at


# The arithmetic alone, over many schedules ----------------------------------------------

CRONS = ["30 2 * * *", "*/20 1-3 * * *", "0 9 * * mon-fri", "59 1 * * *", "0 0,3 * * *"]
CHANGES = [
    (ZAGREB, datetime(2026, 3, 27, tzinfo=UTC)),
    (ZAGREB, datetime(2026, 10, 23, tzinfo=UTC)),
    (NEW_YORK, datetime(2026, 3, 6, tzinfo=UTC)),
    (NEW_YORK, datetime(2026, 10, 30, tzinfo=UTC)),
]


@pytest.mark.parametrize("cron", CRONS)
@pytest.mark.parametrize("zone, start", CHANGES)
def test_next_firing_chained_equals_the_brute_force_clock(cron, zone, start):
    end = start + timedelta(days=4)
    naive = [moment.astimezone(zone).replace(tzinfo=None) for moment in (start, end)]
    walls = set(croniter_range(naive[0] - timedelta(days=1), naive[1] + timedelta(days=1), cron))
    expected = brute_force(start, end, zone, walls.__contains__)
    found, instant = [], start
    while (instant := next_firing(cron, instant, zone)) <= end:
        found.append(instant)
    assert found == expected
    assert len(set(found)) == len(found)


def test_next_firing_from_inside_a_repeated_hour_skips_its_first_occurrences():
    second_pass = datetime(2026, 10, 25, 1, 10, tzinfo=UTC)  # 02:10 CET, the second 02:10
    assert next_firing("30 2 * * *", second_pass, ZAGREB) == datetime(
        2026, 10, 26, 1, 30, tzinfo=UTC
    )


def test_next_firing_with_working_days_and_a_date_that_never_comes():
    friday = datetime(2026, 12, 18, 12, tzinfo=UTC)
    assert next_firing("0 9 * * *", friday, ZAGREB, standup_working_day) == datetime(
        2026, 12, 21, 8, tzinfo=UTC
    )
    assert next_firing("0 9 30 2 *", friday, ZAGREB) is None
    assert next_firing("0 9 * * sat", friday, ZAGREB, standup_working_day) is None


# What a query can say ---------------------------------------------------------------------


def test_match_is_a_pre_filter_for_cron_everies_and_exact_for_times(clock):
    """``Work.match`` (used by probes) selects every due record; for an interval every
    with ``times`` it selects exactly those, spent rounds and new rounds told apart."""
    spent = drive(clock, entered(clock, T, "", "limit"), T + timedelta(days=5))
    renewed = drive(clock, entered(clock, T, "", "limit"), T + timedelta(days=5))
    midway = drive(clock, entered(clock, T + timedelta(days=3), "", "limit"), T + timedelta(days=5))
    assert midway.limited_nudge_fired_count == 2
    uncounted = drive(
        clock, entered(clock, T + timedelta(days=3), "", "limit"), T + timedelta(days=5)
    )
    # As if `times` had been declared after it fired: the count column starts empty.
    Standup.objects.filter(pk=uncounted.pk).update(limited_nudge_fired_count=None)
    clock.move_to(T + timedelta(days=5), tick=False)
    renewed.again()
    entered(clock, T + timedelta(days=1), "America/New_York", "watch_nights")
    entered(clock, T + timedelta(days=2), "", "watch_nights")
    entered(clock, T + timedelta(days=2), "", None)
    records = list(Standup.objects.all())
    everies = [work for work in Standup.workflow.works if work.kind == "every"]
    for hours in range(0, 24 * 8, 5):
        now = T + timedelta(days=5, hours=hours)
        for work in everies:
            matched = set(
                Standup.workflow.queryset().filter(work.match(now)).values_list("pk", flat=True)
            )
            due = {r.pk for r in records if (d := due_at(work, r, now)) is not None and d <= now}
            assert due <= matched, (work.name, now)
            if work.exact:
                assert due == matched, (work.name, now)
    nudge = Standup.workflow.work("every:limited.nudge")
    assert nudge.exact and not Standup.workflow.work("every:nightly.night").exact
    later = T + timedelta(days=7)
    assert not Standup.objects.filter(nudge.match(later), pk=spent.pk).exists()
    assert Standup.objects.filter(nudge.match(later), pk=renewed.pk).exists()


def test_the_count_is_written_when_a_firing_goes_through_save(clock):
    """With a ``post_save`` receiver a firing saves through ``save()``: the count too."""
    saved = []

    def receiver(sender, instance, **kwargs):
        saved.append(instance.limited_nudge_fired_count)

    post_save.connect(receiver, sender=Standup)
    try:
        record = drive(clock, entered(clock, T, "", "limit"), T + timedelta(days=10))
    finally:
        post_save.disconnect(receiver, sender=Standup)
    assert 3 in saved  # the third nudge went through save()
    assert (record.nudges, record.limited_nudge_fired_count) == (3, 3)


def test_saving_a_stale_instance_keeps_the_firing_count(clock):
    record = entered(clock, T, "", "limit")
    stale = fresh(record)
    drive(clock, record, T + timedelta(days=2))
    stale.tz = "Europe/Zagreb"
    stale.save()
    assert fresh(record).limited_nudge_fired_count == 2


def test_a_bulk_move_gives_each_record_its_own_zones_first_firing(clock):
    start = datetime(2026, 6, 1, 12, tzinfo=UTC)
    clock.move_to(start, tick=False)
    zagreb, new_york = Standup.objects.create(), Standup.objects.create(tz="America/New_York")
    outcomes = Standup.objects.filter(pk__in=[zagreb.pk, new_york.pk]).transition("watch_nights")
    assert outcomes == {zagreb.pk: "nightly", new_york.pk: "nightly"}
    for record, zone in ((zagreb, ZAGREB), (new_york, NEW_YORK)):
        first = brute_force(start, start + timedelta(days=1), zone, at_night)[0]
        assert fresh(record).next_due_at == first


def declared(cron):
    """A model ``testapp.Schedule`` whose one every runs on ``cron``."""
    with isolate_apps("tests.testapp"):

        class Workflow:
            open = Step(Transition("close", to="closed"), Every("e", cron=cron, action="save"))
            closed = Step()

        meta = type("Meta", (), {"app_label": "testapp"})
        attrs = {"__module__": __name__, "Meta": meta, "Workflow": Workflow}
        return type("Schedule", (WorkflowModel,), attrs)


def test_changing_a_cron_changes_what_next_due_at_is_computed_from():
    """A worker starting after a schedule changed computes every record's due instant again."""
    assert fingerprint(declared("0 9 * * *")) == fingerprint(declared("0 9 * * *"))
    assert fingerprint(declared("0 9 * * *")) != fingerprint(declared("0 10 * * *"))
