"""The polling scheduler: Schedules in sync with the Works, one query a poll (docs/worker.md)."""

import ast
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_q.models import OrmQ, Schedule, Task

from django_workflow.signals import work_fired
from django_workflow.worker.schedulers.polling import (
    POLL_TASK,
    PollingScheduler,
    poll,
    poll_models,
    schedule_name,
)
from django_workflow.worker.schedulers.scheduler import all_works
from tests.testapp.models import Batch, Proposal, SideEffect, Sync

pytestmark = pytest.mark.django_db


def test_works_sharing_an_interval_and_a_queue_share_one_schedule_across_models():
    groups = PollingScheduler().groups(all_works())
    every_minute = groups[("* * * * *", "workflow")]
    proposal = [w.name for w in every_minute if w.model_label == "testapp.Proposal"]
    assert proposal == [w.name for w in Proposal.workflow.works]
    assert {w.model_label for w in every_minute} >= {"testapp.Proposal", "testapp.Batch"}
    assert not any(w.model_label == "testapp.Alarm" for w in every_minute)  # on the timeline


def test_sync_adds_updates_and_removes_schedules():
    scheduler = PollingScheduler()
    works = all_works()
    first = scheduler.sync(works)
    assert first["added"] == Schedule.objects.count() > 0
    assert scheduler.sync(works) == {
        "added": 0,
        "updated": 0,
        "removed": 0,
        "unchanged": first["added"],
    }
    name = schedule_name("* * * * *", "workflow")
    Schedule.objects.filter(name=name).update(cron="0 * * * *", args="()")
    Schedule.objects.create(
        name="workflow:testapp.Gone:workflow:* * * * *",
        func="x",
        cron="* * * * *",  # release 1
    )
    Schedule.objects.create(name="not-ours", func="y")
    again = scheduler.sync(works)
    assert (again["updated"], again["removed"]) == (1, 1)
    updated = Schedule.objects.get(name=name)
    assert (updated.cron, updated.schedule_type, updated.repeats) == ("* * * * *", "C", -1)
    assert updated.func == "django_workflow.worker.schedulers.polling.poll_models"
    assert "testapp.Proposal" in ast.literal_eval(updated.args)[0]
    assert ast.literal_eval(updated.kwargs) == {"q_options": {"cluster": "workflow"}}
    assert Schedule.objects.filter(name="not-ours").exists()


def test_after_a_sync_every_schedule_is_due_at_once_whatever_its_cron(time_machine):
    """A worker starting polls every group at django-q2's first pass: an hourly group
    must not wait for its next tick (up to an hour) to fire what is already due."""
    time_machine.move_to("2026-06-01 09:01:00Z", tick=False)
    scheduler, works = PollingScheduler(), all_works()
    scheduler.sync(works)
    ours = Schedule.objects.filter(name__startswith="workflow:")
    hourly = ours.get(name=schedule_name("0 * * * *", "workflow"))
    assert hourly.next_run == timezone.now()
    assert not ours.filter(next_run__gt=timezone.now()).exists()
    ours.update(next_run=timezone.now() + timedelta(minutes=59))  # as django-q2 left them
    Schedule.objects.create(name="not-ours", func="y", next_run=timezone.now() + timedelta(hours=1))
    time_machine.move_to("2026-06-01 09:30:00Z", tick=False)  # the worker restarts
    assert scheduler.sync(works)["unchanged"] == ours.count()
    assert set(ours.values_list("next_run", flat=True)) == {timezone.now()}
    assert Schedule.objects.get(name="not-ours").next_run > timezone.now()
    time_machine.move_to("2026-06-01 09:30:05Z", tick=False)  # another node starts
    with CaptureQueriesContext(connection) as queries:
        scheduler.sync(works)
    assert not [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]


def test_self_scheduled_and_precise_deadlines_are_not_polled():
    polled = {w.name for group in PollingScheduler().groups(all_works()).values() for w in group}
    assert "timeout:armed.ring" not in polled  # Alarm is precise
    assert "timeout:monitoring.quick_look" not in polled
    assert "timeout:monitoring.check" in polled


def test_a_poll_asks_once_and_fires_only_what_is_due():
    Batch.objects.bulk_create([Batch() for _ in range(3)])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(hours=30))
    names = [w.name for w in Batch.workflow.works]
    with CaptureQueriesContext(connection) as idle:
        assert poll("testapp.Proposal", [w.name for w in Proposal.workflow.works]) == {}
    assert len(idle.captured_queries) <= 2  # one probe (and preparing it once on PostgreSQL)
    assert poll("testapp.Batch", names) == {"timeout:waiting.ping": 3}


def test_a_poll_queues_automatic_steps_that_waited_too_long():
    record = Sync.objects.create()  # no commit captured: its task was never queued
    Sync.objects.filter(pk=record.pk).update(state_entered_at=timezone.now() - timedelta(minutes=5))
    OrmQ.objects.all().delete()
    assert poll("testapp.Sync", ["step:pushing"]) == {"step:pushing": 1}
    assert Sync.objects.get(pk=record.pk).state == "pushed"  # the test settings run tasks inline


def test_work_fired_reports_each_run():
    received = []

    def listener(sender, **kwargs):
        received.append((sender, kwargs["work"], kwargs["count"]))

    Batch.objects.bulk_create([Batch(), Batch()])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(days=3))
    work_fired.connect(listener)
    try:
        poll("testapp.Batch", [w.name for w in Batch.workflow.works])
    finally:
        work_fired.disconnect(listener)
    assert (Batch, "timeout:waiting.expire", 2) in received


def test_one_task_polls_every_model_of_its_group_and_a_failing_model_stops_no_other(
    monkeypatch,
):
    from django_workflow.worker.schedulers import polling

    Batch.objects.bulk_create([Batch() for _ in range(2)])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(hours=30))
    real = polling.run_due

    def failing_for_proposals(model, works, **kwargs):
        if model is Proposal:
            raise RuntimeError("database gone")
        return real(model, works, **kwargs)

    monkeypatch.setattr(polling, "run_due", failing_for_proposals)
    group = {
        "testapp.Proposal": ["timeout:review.reminder"],
        "testapp.Batch": ["timeout:waiting.ping"],
    }
    with pytest.raises(RuntimeError, match="database gone"):
        poll_models(group)
    assert Batch.objects.filter(waiting_ping_fired_at__isnull=False).count() == 2


def test_the_kick_off_polls_at_once_the_groups_of_the_queues_given():
    Batch.objects.bulk_create([Batch()])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(hours=30))
    scheduler, works = PollingScheduler(), all_works()
    scheduler.sync(works)
    scheduler.kick_off(works, ["orders"])  # a worker of another queue
    assert not SideEffect.objects.exists()
    scheduler.kick_off(works, ["workflow"])  # the tests' tasks run in this process
    assert SideEffect.objects.count() == 1
    # the task of the Schedule, in the Schedule's group
    schedule = Schedule.objects.get(name=schedule_name("* * * * *", "workflow"))
    task = Task.objects.get(group=schedule.name)
    assert (task.func, task.args) == (POLL_TASK, ast.literal_eval(schedule.args))
