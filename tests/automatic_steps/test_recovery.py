"""The heartbeat's bookkeeping: renewing, expiring, recovering and handing over attempts
(docs/worker.md, "Stops, crashes and time limits")."""

import os
import subprocess
from datetime import timedelta

import pytest
from django.test import override_settings
from django_q.models import OrmQ
from django_q.signals import pre_enqueue

from django_workflow.engine import run_step
from django_workflow.engine.attempts import start_attempt
from django_workflow.engine.leases import process_alive, renew
from django_workflow.models import WorkAttempt
from django_workflow.reading.attempts_read import NODE_VARIABLE, RECOVERING
from django_workflow.worker.recovery import hand_over, recover
from tests.moments import T
from tests.testapp.models import STOP_WORDS, Candidate, Sync

pytestmark = pytest.mark.django_db
NODE = "host:1:node"
queued_on_the_broker = override_settings(DJANGO_WORKFLOW={"TASK_OPTIONS": {"sync": False}})


def running_attempt(model, record, node=NODE, pid=None):
    """An attempt started at T by ``node``'s process ``pid`` (this test process by default)."""
    work = model.workflow.work(next(w.name for w in model.workflow.works if w.kind == "step"))
    start_attempt(model, record.pk, work, record.state_entered_at, T, "default")
    attempt = WorkAttempt.objects.get(work=work.name, object_id=str(record.pk))
    attempt.holder, attempt.pid = node, pid or os.getpid()
    attempt.save()
    return attempt


def dead_pid():
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_process_is_alive_until_it_ends():
    assert process_alive(os.getpid())
    assert not process_alive(dead_pid())
    assert not process_alive(None)


def test_renewing_keeps_a_live_attempt_alive_and_expires_a_dead_one(clock):
    alive = running_attempt(Candidate, Candidate.objects.create(resume_words=700))
    clock.move_to(T + timedelta(seconds=30), tick=False)
    assert renew(NODE) == 1
    alive.refresh_from_db()
    assert alive.seen_at == T + timedelta(seconds=30) and alive.alive_until > alive.seen_at
    WorkAttempt.objects.update(pid=dead_pid())
    assert renew(NODE) == 0
    assert WorkAttempt.objects.get().alive_until == T + timedelta(seconds=30)


def test_an_attempt_past_its_time_limit_is_not_renewed(clock):
    running_attempt(Sync, Sync.objects.create())  # time_limit 3 s
    clock.move_to(T + timedelta(minutes=10), tick=False)
    assert renew(NODE) == 0
    clock.move_to(T + timedelta(minutes=10, seconds=1), tick=False)
    with queued_on_the_broker:
        assert recover() == 1


def test_a_live_workers_attempt_is_renewed_for_a_lease_past_its_time_limit(clock, monkeypatch):
    monkeypatch.setenv(NODE_VARIABLE, NODE)  # as in workflow_worker: leases of RECOVERY_AFTER / 2
    beat = timedelta(seconds=10)  # the heartbeat's period, RECOVERY_AFTER / 6
    with override_settings(DJANGO_WORKFLOW={"TASK_OPTIONS": {"sync": False}, "RECOVERY_AFTER": 60}):
        running_attempt(Sync, Sync.objects.create())  # time_limit 3 s
        for n in (1, 2, 3):  # past the time limit, the live worker's own alarm ends the attempt
            clock.move_to(T + n * beat, tick=False)
            assert recover() == 0  # another node's beat, just before this node's
            assert renew(NODE) == 1
        clock.move_to(T + 4 * beat, tick=False)  # 40 s > 3 s + a 30 s lease: it hangs
        assert renew(NODE) == 0
        clock.move_to(T + 4 * beat + timedelta(seconds=1), tick=False)
        assert recover() == 1


def test_an_expired_attempt_is_queued_once_and_taken_over_without_being_spent(clock):
    candidate = Candidate.objects.create(resume_words=700)
    running_attempt(Candidate, candidate)
    WorkAttempt.objects.update(alive_until=T)
    clock.move_to(T + timedelta(seconds=1), tick=False)
    with queued_on_the_broker:
        assert recover() == 1
        assert recover() == 0  # claimed: another heartbeat does not queue it again
    assert OrmQ.objects.count() == 1
    assert WorkAttempt.objects.get().holder == RECOVERING
    assert run_step(Candidate, candidate.pk, "screening") == "interview"
    assert not WorkAttempt.objects.exists()


def test_two_heartbeats_recovering_at_once_queue_each_attempt_once(clock):
    candidates = [Candidate.objects.create(resume_words=700) for _ in range(2)]
    for candidate in candidates:
        running_attempt(Candidate, candidate)
    WorkAttempt.objects.update(alive_until=T)
    clock.move_to(T + timedelta(seconds=1), tick=False)
    theirs = []

    def the_other_heartbeat(**kwargs):
        if not theirs:  # once: it reads the expired attempts while this one queues its first
            theirs.append(None)
            theirs[0] = recover()

    pre_enqueue.connect(the_other_heartbeat)
    try:
        with queued_on_the_broker:
            mine = recover()  # both expired attempts read before the other heartbeat ran
    finally:
        pre_enqueue.disconnect(the_other_heartbeat)
    assert (mine, theirs) == (1, [1])
    queued = sorted(task.task["args"][1] for task in OrmQ.objects.all())
    assert queued == sorted(candidate.pk for candidate in candidates)


def test_a_lost_recovery_is_queued_again_after_recovery_after(clock):
    running_attempt(Candidate, Candidate.objects.create(resume_words=700))
    WorkAttempt.objects.update(alive_until=T)
    with queued_on_the_broker:
        clock.move_to(T + timedelta(seconds=1), tick=False)
        assert recover() == 1
        clock.move_to(T + timedelta(seconds=62), tick=False)  # the queued run never came
        assert recover() == 1
    assert OrmQ.objects.count() == 2


def test_handing_over_queues_a_stopping_nodes_attempts_at_once(clock):
    running_attempt(Candidate, Candidate.objects.create(resume_words=700))
    running_attempt(Sync, Sync.objects.create(), node="other:2:node")
    with queued_on_the_broker:
        assert hand_over(NODE) == 1
    assert set(WorkAttempt.objects.values_list("holder", flat=True)) == {
        RECOVERING,
        "other:2:node",
    }


def test_an_action_stopped_three_times_in_a_row_is_a_poison_pill(clock):
    candidate = Candidate.objects.create(resume_words=STOP_WORDS)
    for _ in range(3):  # each run is told to stop mid-action: released, not spent
        with pytest.raises(KeyboardInterrupt):
            run_step(Candidate, candidate.pk, "screening")
    assert run_step(Candidate, candidate.pk, "screening") is None
    row = WorkAttempt.objects.get()
    assert (row.attempts, row.interruptions) == (1, 0)
    assert "poison pill" in row.last_error
