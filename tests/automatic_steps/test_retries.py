"""Retry budgets, backoff, exhaustion and halting (docs/worker.md)."""

import logging
from datetime import timedelta

import pytest

from django_workflow import Retry, Step, Timeout, run_work
from django_workflow.admin.halted_steps import attempt_row, next_attempt_at
from django_workflow.engine import error_summary, run_step
from django_workflow.engine.attempts import start_attempt
from django_workflow.models import TransitionLog, WorkAttempt
from django_workflow.reading.attempts_read import backoff, runs_at
from django_workflow.signals import work_failed, work_halted
from django_workflow.testing import run_due_work
from django_workflow.worker.schedulers.polling import poll
from tests.moments import T
from tests.testapp.models import STOP_WORDS, Candidate, Monitor, Render, Sync

pytestmark = pytest.mark.django_db


def log(record, trigger):
    rows = TransitionLog.objects.filter(object_id=str(record.pk), triggered_by=trigger)
    return list(rows.values_list("attempt", "error"))


def screen_at(clock, candidate, offset):
    clock.move_to(T + offset, tick=False)
    return run_step(Candidate, candidate.pk, "screening")


@pytest.fixture
def failing_candidate(clock):
    return Candidate.objects.create(resume_words=-5)  # Retry(max_attempts=3, backoff="30s")


def test_exponential_backoff_waits_attempt_to_the_fourth_plus_15_seconds():
    assert [backoff(Retry(), n).total_seconds() for n in (1, 2, 3)] == [16, 31, 96]
    assert backoff(Retry(3, backoff="30s"), 2) == timedelta(seconds=30)


def test_attempts_are_counted_and_retried_after_the_backoff(clock, failing_candidate):
    assert screen_at(clock, failing_candidate, timedelta(0)) is None
    assert log(failing_candidate, "failed") == [(1, "ValueError: negative resume")]
    assert screen_at(clock, failing_candidate, timedelta(seconds=29)) is None
    assert len(log(failing_candidate, "failed")) == 1  # still waiting: nothing ran
    assert screen_at(clock, failing_candidate, timedelta(seconds=30)) is None
    assert [attempt for attempt, _ in log(failing_candidate, "failed")] == [1, 2]


def test_the_last_attempt_takes_on_error(clock, failing_candidate):
    for offset in (0, 30, 60):
        result = screen_at(clock, failing_candidate, timedelta(seconds=offset))
    assert result == "screening_failed"
    assert log(failing_candidate, "error_path") == [(3, "ValueError: negative resume")]
    assert not WorkAttempt.objects.exists()


def test_a_success_after_a_failure_clears_the_attempts(clock, failing_candidate):
    screen_at(clock, failing_candidate, timedelta(0))
    Candidate.objects.filter(pk=failing_candidate.pk).update(resume_words=700)
    assert screen_at(clock, failing_candidate, timedelta(seconds=30)) == "interview"
    assert log(failing_candidate, "automatic") == [(2, "")]
    assert not WorkAttempt.objects.exists()


def test_re_entering_the_step_starts_a_fresh_budget(clock, failing_candidate):
    for offset in (0, 30, 60):
        screen_at(clock, failing_candidate, timedelta(seconds=offset))
    clock.move_to(T + timedelta(minutes=5), tick=False)
    Candidate.objects.get(pk=failing_candidate.pk).rescreen(authorize=False)
    screen_at(clock, failing_candidate, timedelta(minutes=5))
    assert [attempt for attempt, _ in log(failing_candidate, "failed")] == [1, 2, 1]


def test_without_on_error_the_record_stays_put_halted(clock, committed):
    halted = []

    def listener(sender, **kwargs):
        halted.append(kwargs)

    work_halted.connect(listener)
    try:
        record = Sync.objects.create(broken=True)  # two attempts, no on_error
        with committed():
            assert run_step(Sync, record.pk, "pushing") is None
            clock.move_to(T + timedelta(seconds=10), tick=False)
            assert run_step(Sync, record.pk, "pushing") is None
    finally:
        work_halted.disconnect(listener)
    assert Sync.objects.get(pk=record.pk).state == "pushing"
    assert log(record, "failed") == [(1, "ConnectionError: remote refused")]
    assert log(record, "halted") == [(2, "ConnectionError: remote refused")]
    assert [(h["work"], h["attempt"]) for h in halted] == [("step:pushing", 2)]
    assert WorkAttempt.objects.get().halted
    Sync.objects.filter(pk=record.pk).update(broken=False)
    clock.move_to(T + timedelta(days=1), tick=False)
    assert run_step(Sync, record.pk, "pushing") is None  # halted for this round
    assert len(log(record, "halted")) == 1


def test_a_failed_attempt_sends_work_failed_with_its_retry_instant(clock, committed):
    received = []

    def listener(sender, **kwargs):
        received.append(kwargs)

    work_failed.connect(listener)
    try:
        with committed():
            Candidate.objects.create(resume_words=-5)
    finally:
        work_failed.disconnect(listener)
    [failure] = received
    assert (failure["work"], failure["attempt"]) == ("step:screening", 1)
    assert failure["retry_at"] == T + timedelta(seconds=30)


def test_an_attempt_whose_worker_died_is_not_spent_and_runs_again(clock):
    candidate = Candidate.objects.create(resume_words=700)
    work = Candidate.workflow.work("step:screening")
    # A worker started attempt 1 and died; without a heartbeat its lease is
    # RECOVERY_AFTER plus the step's time limit (2 minutes).
    assert start_attempt(Candidate, candidate.pk, work, candidate.state_entered_at, T, "default")
    assert screen_at(clock, candidate, timedelta(minutes=2)) is None  # may still be running
    assert screen_at(clock, candidate, timedelta(minutes=3, seconds=1)) == "interview"
    assert log(candidate, "automatic") == [(1, "")]
    assert not log(candidate, "failed")


def test_three_interruptions_in_a_row_count_as_one_failed_attempt(clock):
    record = Sync.objects.create()
    work = Sync.workflow.work("step:pushing")
    for minutes in (0, 2, 4):  # three workers started it and were killed
        clock.move_to(T + timedelta(minutes=minutes), tick=False)
        now = T + timedelta(minutes=minutes)
        assert start_attempt(Sync, record.pk, work, record.state_entered_at, now, "default")
    clock.move_to(T + timedelta(minutes=6), tick=False)
    assert run_step(Sync, record.pk, "pushing") is None
    [(attempt, error)] = log(record, "failed")
    assert attempt == 1 and "poison pill" in error
    assert WorkAttempt.objects.get().interruptions == 0
    assert Sync.objects.get(pk=record.pk).pushes == 0  # the action never ran to the end
    clock.move_to(T + timedelta(minutes=6, seconds=10), tick=False)
    assert run_step(Sync, record.pk, "pushing") == "pushed"  # attempt 2 of 2


def test_a_failed_attempt_ends_the_interruptions_in_a_row(clock):
    candidate = Candidate.objects.create(resume_words=STOP_WORDS)

    def screen(words):
        Candidate.objects.filter(pk=candidate.pk).update(resume_words=words)
        return run_step(Candidate, candidate.pk, "screening")

    with pytest.raises(KeyboardInterrupt):
        screen(STOP_WORDS)  # stopped: the next run takes it over as an interruption
    assert screen(-5) is None  # that run's attempt 1 fails, which ends the row
    clock.move_to(T + timedelta(seconds=30), tick=False)
    for _ in range(2):
        with pytest.raises(KeyboardInterrupt):
            screen(STOP_WORDS)
    assert screen(700) == "interview"  # two interruptions since the failure: no poison pill
    assert log(candidate, "failed") == [(1, "ValueError: negative resume")]
    assert log(candidate, "automatic") == [(2, "")]


def test_a_worker_seen_alive_past_the_time_limit_spends_the_attempt(clock):
    record = Sync.objects.create()
    work = Sync.workflow.work("step:pushing")
    start_attempt(Sync, record.pk, work, record.state_entered_at, T, "default")
    WorkAttempt.objects.update(seen_at=T + timedelta(seconds=4))  # a heartbeat after 3 s
    clock.move_to(T + timedelta(minutes=2), tick=False)
    assert run_step(Sync, record.pk, "pushing") is None
    [(attempt, error)] = log(record, "failed")
    assert attempt == 1 and error.startswith("TimeLimitExceeded")


def test_a_stopped_action_is_released_without_spending_the_attempt(clock):
    candidate = Candidate.objects.create(resume_words=STOP_WORDS)
    with pytest.raises(KeyboardInterrupt):
        run_step(Candidate, candidate.pk, "screening")
    row = WorkAttempt.objects.get()  # expired at once, for any worker to take over
    assert (row.attempts, row.interruptions, row.alive_until) == (0, 0, T)
    Candidate.objects.filter(pk=candidate.pk).update(resume_words=700)
    assert run_step(Candidate, candidate.pk, "screening") == "interview"
    assert log(candidate, "automatic") == [(1, "")]


def test_a_timeout_action_halts_after_its_attempts_without_marking_itself_fired(clock):
    monitor = Monitor.objects.create(next_check_at=T + timedelta(hours=1), fail_checks=True)
    for minutes in (60, 65, 70, 75, 120):
        clock.move_to(T + timedelta(minutes=minutes), tick=False)
        run_due_work()
    assert [row[0] for row in log(monitor, "failed")] == [1, 2]
    assert [row[0] for row in log(monitor, "halted")] == [3]
    stored = Monitor.objects.get(pk=monitor.pk)
    assert (stored.checks, stored.monitoring_check_fired_at) == (0, None)


def test_a_timeout_action_that_succeeds_on_a_retry_leaves_no_attempts_behind(clock):
    monitor = Monitor.objects.create(next_check_at=T + timedelta(hours=1), fail_checks=True)
    clock.move_to(T + timedelta(minutes=60), tick=False)
    run_due_work()  # attempt 1 fails
    Monitor.objects.filter(pk=monitor.pk).update(fail_checks=False)
    clock.move_to(T + timedelta(minutes=65), tick=False)
    run_due_work()  # attempt 2 succeeds; the check moves itself to tomorrow
    assert Monitor.objects.get(pk=monitor.pk).checks == 1
    assert not WorkAttempt.objects.exists()
    # A check set back to that same instant is a deadline of its own: a full budget.
    stored = Monitor.objects.get(pk=monitor.pk)
    stored.next_check_at, stored.fail_checks = T + timedelta(hours=1), True
    stored.save()
    for minutes in (70, 75):
        clock.move_to(T + timedelta(minutes=minutes), tick=False)
        run_due_work()
    assert [row[0] for row in log(monitor, "failed")] == [1, 1, 2]
    assert not log(monitor, "halted")


def test_a_failed_deadline_halts_and_never_takes_the_steps_on_error(clock):
    render = Render.objects.create()  # its automatic step has not run (nothing committed)
    clock.move_to(T + timedelta(hours=1), tick=False)
    assert run_work(Render, "timeout:rendering.nudge") == 0  # Retry(): one attempt, spent
    assert Render.objects.get(pk=render.pk).current_step == "rendering"
    assert log(render, "halted") == [(1, "RuntimeError: the renderer did not answer")]
    assert not log(render, "error_path")
    assert run_step(Render, render.pk, "rendering") == "rendered"  # the step's action is free


def test_a_new_round_gives_a_halted_timeout_a_fresh_budget(clock):
    monitor = Monitor.objects.create(next_check_at=T + timedelta(hours=1), fail_checks=True)
    for minutes in (60, 65, 70):
        clock.move_to(T + timedelta(minutes=minutes), tick=False)
        run_due_work()
    stored = Monitor.objects.get(pk=monitor.pk)
    stored.fail_checks, stored.next_check_at = False, T + timedelta(hours=3)
    stored.save()
    clock.move_to(T + timedelta(hours=3), tick=False)
    run_due_work()
    assert Monitor.objects.get(pk=monitor.pk).checks == 1


def warning_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.fixture
def workflow_logs(caplog):
    caplog.set_level(logging.DEBUG, logger="django_workflow")
    return caplog


def test_a_failed_attempt_is_one_warning_line_with_the_traceback_at_debug(
    clock, failing_candidate, workflow_logs
):
    pk = failing_candidate.pk
    screen_at(clock, failing_candidate, timedelta(0))
    [warning] = [r for r in workflow_logs.records if r.levelno == logging.WARNING]
    assert warning.getMessage() == (
        f"testapp.Candidate {pk}: step:screening failed, attempt 1 of 3: "
        "ValueError: negative resume (next attempt with the poll at 09:01:00, the first after "
        "the 30 s backoff)"
    )
    assert warning.name == "django_workflow.engine" and warning.exc_info is None
    [debug] = [r for r in workflow_logs.records if r.levelno == logging.DEBUG]
    assert debug.exc_info[1].args == ("negative resume",)
    assert "run_screening" in workflow_logs.text  # the traceback reaches the action's frame
    assert not [r for r in workflow_logs.records if r.levelno >= logging.ERROR]

    workflow_logs.clear()
    for offset in (30, 60):
        screen_at(clock, failing_candidate, timedelta(seconds=offset))
    assert warning_lines(workflow_logs) == [
        f"testapp.Candidate {pk}: step:screening failed, attempt 2 of 3: "
        "ValueError: negative resume (next attempt with the poll at 09:01:00, the first after "
        "the 30 s backoff)",
        f"testapp.Candidate {pk}: step:screening failed, attempt 3 of 3: "
        "ValueError: negative resume (on_error: screening_failed)",
    ]
    assert not [r for r in workflow_logs.records if r.levelno >= logging.ERROR]


def test_a_failed_timeout_action_is_one_warning_line_per_attempt(clock, workflow_logs):
    monitor = Monitor.objects.create(next_check_at=T + timedelta(hours=1), fail_checks=True)
    for minutes in (60, 65, 70):
        clock.move_to(T + timedelta(minutes=minutes), tick=False)
        run_due_work()
    prefix = f"testapp.Monitor {monitor.pk}: timeout:monitoring.check failed"
    error = "RuntimeError: check failed"
    then = "the first after the 300 s backoff"
    assert warning_lines(workflow_logs) == [
        f"{prefix}, attempt 1 of 3: {error} (next attempt with the poll at 10:05:00, {then})",
        f"{prefix}, attempt 2 of 3: {error} (next attempt with the poll at 10:10:00, {then})",
        f"{prefix}, attempt 3 of 3: {error} (halted)",
    ]
    assert len([r for r in workflow_logs.records if r.levelno == logging.DEBUG]) == 3
    assert not [r for r in workflow_logs.records if r.levelno >= logging.ERROR]


def test_a_poison_pill_is_a_warning_line_too_without_a_traceback(clock, workflow_logs):
    record = Sync.objects.create()
    work = Sync.workflow.work("step:pushing")
    for minutes in (0, 2, 4):  # three workers started it and were killed
        clock.move_to(T + timedelta(minutes=minutes), tick=False)
        now = T + timedelta(minutes=minutes)
        start_attempt(Sync, record.pk, work, record.state_entered_at, now, "default")
    clock.move_to(T + timedelta(minutes=6), tick=False)
    run_step(Sync, record.pk, "pushing")
    [line] = warning_lines(workflow_logs)
    assert line.startswith(f"testapp.Sync {record.pk}: step:pushing failed, attempt 1 of 2: ")
    assert "PoisonPill: the attempt was interrupted 3 times" in line
    assert not [r for r in workflow_logs.records if r.levelno == logging.DEBUG]


def test_an_error_summary_is_one_line():
    assert error_summary(ValueError("first\nsecond")) == "ValueError: first"
    assert error_summary(KeyError()) == "KeyError"
    assert len(error_summary(ValueError("x" * 1000))) == len("ValueError: ") + 300


# When a retry really runs (docs/worker.md, "Retries and time limits") -----------------


def test_a_step_retry_runs_with_the_first_poll_from_its_retry_instant_which_is_announced(
    clock, workflow_logs
):
    clock.move_to(T + timedelta(seconds=5), tick=False)  # entered late in the minute
    candidate = Candidate.objects.create(resume_words=-5)
    run_step(Candidate, candidate.pk, "screening")  # fails; retry allowed from 09:00:35
    announced = next_attempt_at(candidate, attempt_row(candidate))
    assert announced == T + timedelta(minutes=1)  # the poll of 09:01, not "in 30 s"
    assert "next attempt with the poll at 09:01:00" in warning_lines(workflow_logs)[0]
    # The poll of that tick queues it (the test cluster runs it inline), though the record
    # entered the step less than a minute before: its failed attempt left no task behind.
    clock.move_to(announced, tick=False)
    assert poll("testapp.Candidate", ["step:screening"]) == {"step:screening": 1}
    assert [attempt for attempt, _ in log(candidate, "failed")] == [1, 2]


def test_the_poll_before_the_retry_instant_leaves_the_step_alone(clock):
    candidate = Candidate.objects.create(resume_words=-5)
    run_step(Candidate, candidate.pk, "screening")  # retry allowed from 09:00:30
    clock.move_to(T + timedelta(seconds=29), tick=False)
    assert poll("testapp.Candidate", ["step:screening"]) == {}
    assert len(log(candidate, "failed")) == 1


def test_a_halted_step_announces_no_next_attempt(clock):
    sync = Sync.objects.create(broken=True)  # Retry(max_attempts=2), no on_error
    for offset in (0, 60):
        clock.move_to(T + timedelta(seconds=offset), tick=False)
        run_step(Sync, sync.pk, "pushing")
    assert attempt_row(sync).halted and next_attempt_at(sync, attempt_row(sync)) is None


def test_an_hourly_poll_runs_the_retry_at_the_next_hour(declare):
    class Workflow:
        check_interval = "0 * * * *"
        working = Step(action="act", on_success="done", retry=Retry(3, backoff="30s"))
        done = Step()

    model = declare(Workflow, act=lambda self: None)
    work = model.workflow.work("step:working")
    assert runs_at(model.workflow, work, T + timedelta(seconds=30)) == T + timedelta(hours=1)
    assert runs_at(model.workflow, work, T) == T  # a tick itself is "at or after"


def test_a_precise_deadline_retries_at_its_instant(declare):
    class Workflow:
        scheduler = "precise"
        waiting = Step(
            Timeout("ping", fire_after="1m", action="act", retry=Retry(3, backoff="5s")),
            Timeout("give_up", fire_after="1d", transition_to="done"),
        )
        done = Step()

    model = declare(Workflow, act=lambda self: None)
    work = model.workflow.work("timeout:waiting.ping")
    at = T + timedelta(seconds=65)
    assert runs_at(model.workflow, work, at) == at
