"""``record.sla()`` against a brute-force reference (docs/slas.md): random histories of
``Inquiry`` records moving between running and paused steps, in several zones, across
the autumn clock changes and the Christmas holidays; the reference walks the history
minute by minute and counts the minutes the clock runs."""

import random
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from django_workflow.scheduling import due_at
from tests.testapp.models import Inquiry

pytestmark = pytest.mark.django_db

MINUTE = timedelta(minutes=1)
HOLIDAYS = {date(2026, 12, 24), date(2026, 12, 25), date(2027, 1, 1)}
ZONES = ["", "America/New_York", "Asia/Tokyo", "Europe/London"]
RUNNING = {"new", "working", "escalated"}
TARGET = 16 * 60  # minutes
HISTORIES = 120


def working_minute(instant, zone):
    """Whether the minute starting at ``instant`` is inside the working hours there."""
    local = instant.astimezone(zone)
    if local.weekday() >= 5 or local.date() in HOLIDAYS:
        return False
    return 9 <= local.hour < 17


def reference(stays, now, zone):
    """Minutes run by ``now``: each stay is ``(step, start, end)``, the last open."""
    minutes = 0
    for step, start, end in stays:
        if step not in RUNNING:
            continue
        instant = start
        while instant < min(end or now, now):
            minutes += working_minute(instant, zone)
            instant += MINUTE
    return minutes


def reached(now, minutes_used, zone, minutes):
    """When a clock running from ``now`` with ``minutes_used`` reaches ``minutes``."""
    instant = now
    while minutes_used < minutes:
        minutes_used += working_minute(instant, zone)
        instant += MINUTE
    return instant


def moves(step):
    return [t for t in Inquiry.workflow.transitions_in(step) if t.name != "resolve"]


def random_history(rng, time_machine):
    """A record driven through random moves; its stays, its zone and the final instant."""
    start = datetime(2026, 10, 22, tzinfo=UTC) + rng.randrange(80 * 24 * 60) * MINUTE
    zone_name = rng.choice(ZONES)
    time_machine.move_to(start, tick=False)
    inquiry = Inquiry.objects.create(zone=zone_name)
    stays, at = [["new", start, None]], start
    for _ in range(rng.randrange(1, 7)):
        at += rng.randrange(1, 3 * 24 * 60) * MINUTE
        time_machine.move_to(at, tick=False)
        transition = rng.choice(moves(inquiry.state))
        inquiry = Inquiry.objects.get(pk=inquiry.pk).transition(transition.name)
        stays[-1][2] = at
        stays.append([transition.to, at, None])
    now = at + rng.randrange(1, 2 * 24 * 60) * MINUTE
    time_machine.move_to(now, tick=False)
    zone = ZoneInfo(zone_name or "Europe/Zagreb")
    return Inquiry.objects.get(pk=inquiry.pk), stays, zone, now


def test_the_clock_and_its_alarms_equal_a_minute_by_minute_reference(time_machine):
    rng = random.Random(2026)
    warn = {w.step: w for w in Inquiry.workflow.works if w.name.endswith("resolution.warn")}
    for _ in range(HISTORIES):
        inquiry, stays, zone, now = random_history(rng, time_machine)
        used = reference(stays, now, zone)
        clock = inquiry.sla("resolution")
        assert clock.consumed == used * MINUTE, (stays, zone)
        assert clock.remaining == max(TARGET - used, 0) * MINUTE
        over = used >= TARGET
        if inquiry.state not in RUNNING:
            assert (clock.state, clock.due_at) == ("breached" if over else "paused", None)
            continue
        assert clock.state == ("breached" if over else "running")
        if used < TARGET:
            assert clock.due_at == reached(now, used, zone, TARGET), (stays, zone)
        if used < TARGET * 3 // 4:
            assert due_at(warn[inquiry.state], inquiry, now) == reached(
                now, used, zone, TARGET * 3 // 4
            )
