"""The precise timeline in-process: arming, firing never early, re-checking, the lease."""

import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from django_workflow.worker.schedulers.precise import Lease, Timeline
from django_workflow.worker.schedulers.scheduler import all_works
from tests.moments import T
from tests.testapp.models import Alarm

pytestmark = pytest.mark.django_db


@pytest.fixture
def timeline(time_machine):
    time_machine.move_to(T, tick=False)
    timeline = Timeline(all_works())
    timeline.leading = True
    return timeline


def test_only_precise_deadlines_are_on_the_timeline(timeline):
    assert {(w.model_label, w.name) for w in timeline.works} == {
        ("testapp.Alarm", "timeout:armed.ring"),
        ("testapp.Alarm", "timeout:armed.give_up"),
        ("testapp.AtThePreciseFloor", "timeout:waiting.soon"),
        ("hiring.Candidate", "timeout:awaiting_interview.interview_held"),
        ("hiring.Candidate", "timeout:decision.nudge"),
        ("hiring.Candidate", "timeout:offer_sent.offer_reminder"),
        ("hiring.Candidate", "timeout:offer_sent.offer_expiry"),
    }


def test_a_timer_never_fires_early_and_checks_the_record_again(timeline, time_machine):
    stays = Alarm.objects.create(ring_at=T + timedelta(seconds=10))
    leaves = Alarm.objects.create(ring_at=T + timedelta(seconds=10))
    timeline.sweep()
    assert timeline.seconds_to_next_timer() == 10
    time_machine.move_to(T + timedelta(seconds=10) - timedelta(microseconds=1), tick=False)
    assert timeline.fire_due() == 0
    Alarm.objects.filter(pk=leaves.pk).update(state="done")  # moved on after it was armed
    time_machine.move_to(T + timedelta(seconds=10), tick=False)
    assert timeline.fire_due() == 1
    rings = dict(Alarm.objects.values_list("pk", "rings"))
    assert rings == {stays.pk: 1, leaves.pk: 0}


def test_only_deadlines_inside_the_horizon_are_armed(timeline):
    Alarm.objects.create(ring_at=T + timedelta(seconds=31))
    timeline.sweep()
    assert timeline.seconds_to_next_timer() is None


def test_an_overdue_deadline_fires_at_the_first_sweep(timeline):
    late = Alarm.objects.create(ring_at=T - timedelta(minutes=5))  # a dead leader held it
    timeline.sweep()
    assert timeline.fire_due() == 1
    assert Alarm.objects.get(pk=late.pk).rings == 1


@pytest.mark.django_db(transaction=True)
def test_a_change_in_this_process_arms_at_once_while_the_timeline_runs():
    timeline = Timeline(all_works())
    timeline.sweep_every = 3600  # only the first sweep: what follows must come from the signal
    stop = threading.Event()
    runner = threading.Thread(target=timeline.run, args=(stop,))
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while not timeline.leading and time.monotonic() < deadline:
            time.sleep(0.01)
        assert timeline.leading
        ring_at = timezone.now() + timedelta(seconds=20)
        Alarm.objects.create(ring_at=ring_at)
        assert (ring_at, "testapp.Alarm", "timeout:armed.ring") in timeline.armed
    finally:
        stop.set()
        runner.join()


def test_one_node_holds_the_lease_until_it_expires(time_machine):
    time_machine.move_to(T, tick=False)
    first = Lease(holder="first", duration=timedelta(seconds=15))
    second = Lease(holder="second", duration=timedelta(seconds=15))
    assert first.hold() and not second.hold()
    time_machine.move_to(T + timedelta(seconds=10), tick=False)
    assert first.hold() and not second.hold()  # renewed until T + 25 s
    time_machine.move_to(T + timedelta(seconds=26), tick=False)
    assert second.hold() and not first.hold()
    second.release()
    assert first.hold()
