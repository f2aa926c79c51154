"""Interrupted work is not failed work: stops and crashes of real workers (docs/worker.md).

Each test runs ``manage.py workflow_worker`` subprocesses on the test
database, with ``RECOVERY_AFTER`` cut to 6 seconds. ``make test`` runs this
module a second time on django-q2's Redis broker, which has no receipts: a
task killed there is gone, and only the workflow's own recovery brings it back.
"""

import os
import signal
import time

import pytest
from django_q.models import Schedule, Task

from django_workflow.models import TransitionLog, WorkAttempt
from django_workflow.reading.attempts_read import RECOVERING
from django_workflow.worker.schedulers.polling import POLL_TASK
from tests.processes import queued_for_the_worker, wait_for, worker
from tests.testapp.models import Job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

RECOVERY_AFTER = 6
FAST = {"WORKFLOW_RECOVERY_AFTER": str(RECOVERY_AFTER), "WORKFLOW_SHUTDOWN_GRACE": "20"}
FAILURES = ("failed", "halted", "error_path")


def job(tmp_path, **values):
    trace = tmp_path / "trace"
    trace.touch()
    with queued_for_the_worker:
        return Job.objects.create(trace=str(trace), **values)


def stored(record):
    return Job.objects.get(pk=record.pk)


def attempts_logged(record):
    rows = TransitionLog.objects.filter(object_id=str(record.pk))
    return list(rows.exclude(triggered_by="initial").values_list("triggered_by", "attempt"))


@pytest.mark.parametrize("whole_group", [False, True], ids=["worker", "process-group"])
def test_a_stopped_worker_lets_the_running_action_finish_and_exits_0(tmp_path, whole_group):
    with worker(tmp_path, env=FAST) as process:
        record = job(tmp_path, sleep_seconds=4)
        wait_for(lambda: record.starts() == 1, 30, "the action to start")
        (os.killpg if whole_group else os.kill)(process.pid, signal.SIGTERM)
        assert process.wait(timeout=40) == 0
    assert (stored(record).state, stored(record).runs, record.starts()) == ("done", 1, 1)
    assert attempts_logged(record) == [("automatic", 1)]
    assert (tmp_path / "worker.log").read_text().rstrip().endswith("stopped")


def start_up_polls_done():
    """Whether every poll a starting worker queues (one per Schedule) has finished."""
    polls = Schedule.objects.filter(func=POLL_TASK).count()
    return polls and Task.objects.filter(func=POLL_TASK).count() >= polls


def test_an_action_outliving_the_grace_is_released_and_runs_on_the_next_worker(tmp_path):
    # Only the action may still run when the grace ends, or the count below is off: the
    # worker's start-up polls (slow in fresh processes on a busy machine) are let finish
    # first, and the grace leaves a poll started by a minute's tick time to end.
    with worker(tmp_path, "first", env={**FAST, "WORKFLOW_SHUTDOWN_GRACE": "5"}) as first:
        wait_for(start_up_polls_done, 60, "the start-up polls to finish")
        record = job(tmp_path, sleep_seconds=40)  # outlives the grace
        wait_for(lambda: record.starts() == 1, 30, "the action to start")
        os.killpg(first.pid, signal.SIGTERM)
        assert first.wait(timeout=40) == 0
    assert "killed 1 process(es) still running after 5 s" in (tmp_path / "first.log").read_text()
    attempt = WorkAttempt.objects.get()
    assert (stored(record).state, attempt.attempts, attempt.holder) == ("running", 0, RECOVERING)
    Job.objects.filter(pk=record.pk).update(sleep_seconds=0)
    with worker(tmp_path, "second", env=FAST):
        wait_for(lambda: stored(record).state == "done", 60, "the next worker")
    assert (record.starts(), stored(record).runs) == (2, 1)
    assert attempts_logged(record) == [("automatic", 1)]  # the stop spent no attempt


def test_a_killed_workers_action_runs_again_on_another_worker(tmp_path):
    with worker(tmp_path, "first", env=FAST) as first:
        record = job(tmp_path, sleep_seconds=3)
        wait_for(lambda: record.starts() == 1, 30, "the action to start")
        os.killpg(first.pid, signal.SIGKILL)  # OOM killer, power loss: no goodbye
        first.wait()
    killed = time.monotonic()
    with worker(tmp_path, "second", env=FAST):
        wait_for(lambda: record.starts() == 2, 60, "the action to run again")
        again = time.monotonic() - killed
        wait_for(lambda: stored(record).state == "done", 30, "the success step")
    assert again < RECOVERY_AFTER + 10  # the second worker's start-up included
    assert stored(record).runs == 1
    assert attempts_logged(record) == [("automatic", 1)]
    assert not WorkAttempt.objects.exists()


def test_an_action_that_kills_its_worker_three_times_is_a_poison_pill(tmp_path):
    with worker(tmp_path, env=FAST):
        record = job(tmp_path, kill_worker=True)
        wait_for(lambda: stored(record).state == "failed", 120, "the poison pill")
    assert record.starts() == 3
    [(trigger, attempt, error)] = TransitionLog.objects.filter(
        object_id=str(record.pk), triggered_by__in=FAILURES
    ).values_list("triggered_by", "attempt", "error")
    assert (trigger, attempt) == ("error_path", 1)
    assert "poison pill" in error
