"""workflow_worker for real: django-q2 clusters and the timeline in subprocesses (docs/worker.md).

Each test starts ``manage.py workflow_worker`` processes on the test database
and watches the rows they change.
"""

import os
import signal
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from django_workflow.engine import run_step
from django_workflow.models import TransitionLog, WorkAttempt
from tests.processes import (
    queued_for_the_worker,
    run_once,
    wait_for,
    worker,
    workers_at_once,
)
from tests.testapp.models import Alarm, Batch, Order, SideEffect, Sync

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

# Tasks queued by this process go to the broker, for the worker to run.


def test_an_automatic_chain_runs_through_the_worker_without_a_poll(tmp_path):
    with worker(tmp_path), queued_for_the_worker:
        order = Order.objects.create()
        started = time.monotonic()
        order.place()
        wait_for(lambda: Order.objects.get(pk=order.pk).status == "shipped", 30, "the chain")
        elapsed = time.monotonic() - started
    assert Order.objects.get(pk=order.pk).visited == "charge,reserve,pack,ship,"
    assert elapsed < 20  # far below the 30 s it takes django-q2 to look at any Schedule


def test_a_deadline_due_when_the_worker_starts_fires_within_seconds(tmp_path):
    (batch,) = Batch.objects.bulk_create([Batch()])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(hours=30))
    with worker(tmp_path):
        running = time.monotonic()  # the worker has just said "running:"
        wait_for(lambda: SideEffect.objects.exists(), 60, "the first poll")
        elapsed = time.monotonic() - running
    print(f"the first poll fired {elapsed:.2f} s after the worker said running")
    # django-q2's scheduler first looks at the Schedules about 30 s after a start.
    assert elapsed < 10
    assert SideEffect.objects.get().batch_id == batch.pk


def test_two_workers_poll_due_deadlines_and_fire_each_record_once(tmp_path):
    Batch.objects.bulk_create([Batch() for _ in range(60)])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(hours=30))
    with workers_at_once(tmp_path, "first", "second"):
        # Each worker's first poll runs at its start: both fire, each record once.
        wait_for(lambda: SideEffect.objects.count() >= 60, 120, "the reminder poll")
        time.sleep(2)
    assert SideEffect.objects.count() == 60
    assert Batch.objects.filter(waiting_ping_fired_at__isnull=False).count() == 60
    assert TransitionLog.objects.filter(transition_name="ping").count() == 60


def test_a_precise_deadline_fires_within_a_second_of_its_instant(tmp_path):
    with worker(tmp_path):
        time.sleep(1.5)  # the timeline takes the lease at its first sweep
        alarm = Alarm.objects.create(ring_at=timezone.now() + timedelta(seconds=4))
        wait_for(lambda: Alarm.objects.get(pk=alarm.pk).rings == 1, 30, "the alarm")
    stored = Alarm.objects.get(pk=alarm.pk)
    lateness = stored.rang_at - stored.ring_at
    assert timedelta(0) <= lateness < timedelta(seconds=1)


def test_a_killed_leader_loses_nothing_and_another_takes_over(tmp_path):
    with worker(tmp_path, "leader") as leader:
        time.sleep(1.5)  # the leader takes the lease at its first sweep
        with worker(tmp_path, "follower"):
            # Both are up before the alarm exists: however long a start takes, the
            # leader is in the middle of the 4-second action below when it is killed.
            ring_at = timezone.now() + timedelta(seconds=3)
            alarm = Alarm.objects.create(ring_at=ring_at, sleep_seconds=4)
            wait_for(lambda: timezone.now() > alarm.ring_at + timedelta(seconds=1), 10, "ring")
            os.killpg(leader.pid, signal.SIGKILL)
            leader.wait()
            wait_for(lambda: Alarm.objects.get(pk=alarm.pk).rings >= 1, 60, "the takeover")
            time.sleep(1)
    assert Alarm.objects.get(pk=alarm.pk).rings == 1
    assert (
        TransitionLog.objects.filter(object_id=str(alarm.pk), transition_name="ring").count() == 1
    )
    assert "leading" in (tmp_path / "follower.log").read_text()


def test_a_hung_action_is_killed_at_its_time_limit_and_counts_as_an_attempt(tmp_path):
    with worker(tmp_path), queued_for_the_worker:
        record = Sync.objects.create(hang_seconds=60)  # time_limit is 3 s
        wait_for(lambda: WorkAttempt.objects.filter(attempts=1).exists(), 30, "the attempt")
        time.sleep(8)  # django-q2 kills the task a few seconds past its timeout
    stored = Sync.objects.get(pk=record.pk)
    assert (stored.state, stored.pushes) == ("pushing", 0)  # nothing half-written
    Sync.objects.filter(pk=record.pk).update(hang_seconds=0)
    later = timezone.now() + timedelta(minutes=5)
    assert run_step(Sync, record.pk, "pushing", now=later) == "pushed"
    assert (
        TransitionLog.objects.get(object_id=str(record.pk), triggered_by="automatic").attempt == 2
    )


def test_once_runs_what_is_due_and_exits(tmp_path):
    Batch.objects.bulk_create([Batch() for _ in range(5)])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(days=3))
    result = run_once()
    assert result.returncode == 0, result.stderr
    named = ", ".join(f"#{pk}" for pk in Batch.objects.order_by("pk").values_list("pk", flat=True))
    assert f"testapp.Batch: timeout:waiting.expire fired for {named}\n" in result.stdout
    assert Batch.objects.filter(state="expired").count() == 5


@pytest.mark.parametrize("signum, whole_group", [(signal.SIGTERM, False), (signal.SIGINT, True)])
def test_sigterm_and_ctrl_c_stop_the_worker_cleanly(tmp_path, signum, whole_group):
    with worker(tmp_path) as process:
        (os.killpg if whole_group else os.kill)(process.pid, signum)
        assert process.wait(timeout=30) == 0
    assert (tmp_path / "worker.log").read_text().rstrip().endswith("stopped")
