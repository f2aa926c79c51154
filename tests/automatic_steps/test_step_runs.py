"""Automatic steps run in batches: one queued run per step takes its records from the
records table (docs/automatic-steps.md)."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django_q.models import OrmQ

from django_workflow.engine.steps import run_steps
from django_workflow.models import QueuedRun, TransitionLog, WorkAttempt
from django_workflow.worker.schedulers.polling import poll
from django_workflow.worker.transport import run_automatic_steps
from tests.moments import T
from tests.testapp.models import Import

pytestmark = pytest.mark.django_db

queued_on_the_broker = override_settings(DJANGO_WORKFLOW={"TASK_OPTIONS": {"sync": False}})


def runs_queued():
    return [tuple(task.task["args"]) for task in OrmQ.objects.all()]


def test_many_entries_into_a_step_queue_one_run_of_it(committed):
    with queued_on_the_broker, committed():
        records = [Import.objects.create() for _ in range(3)]
    with queued_on_the_broker, committed():
        Import.objects.create()  # the run is still queued: nothing more to queue
    assert runs_queued() == [("testapp.Import", "parse")]
    assert run_automatic_steps("testapp.Import", "parse") == 4
    assert {Import.objects.get(pk=r.pk).state for r in records} == {"done"}


def test_an_entry_after_the_run_found_nothing_left_queues_a_new_run(committed):
    with queued_on_the_broker, committed():
        Import.objects.create()
    OrmQ.objects.all().delete()  # the worker took it
    run_automatic_steps("testapp.Import", "parse")
    assert not QueuedRun.objects.exists()
    with queued_on_the_broker, committed():
        Import.objects.create()
    assert runs_queued() == [("testapp.Import", "parse")]


def test_a_run_takes_records_nobody_announced_and_leaves_no_attempt_rows():
    Import.objects.bulk_create([Import() for _ in range(5)])
    Import._base_manager.update(state="parse")  # written around the engine: nothing queued
    assert run_steps(Import, "parse") == (5, False)
    assert set(Import.objects.values_list("state", flat=True)) == {"done"}
    assert not WorkAttempt.objects.exists()


def test_a_run_out_of_time_stops_and_says_some_are_left():
    Import.objects.bulk_create([Import() for _ in range(3)])
    Import._base_manager.update(state="parse")
    assert run_steps(Import, "parse", budget=0) == (0, True)


def test_a_run_leaves_a_halted_record_alone_and_runs_the_others():
    failing, fine = Import.objects.bulk_create([Import(rows=-1), Import()])
    Import._base_manager.update(state="parse")
    assert run_steps(Import, "parse") == (1, False)  # Retry() is one attempt: halted
    assert Import.objects.get(pk=fine.pk).state == "done"
    [attempt] = WorkAttempt.objects.all()
    assert (attempt.object_id, attempt.attempts, attempt.halted) == (str(failing.pk), 1, True)
    assert run_steps(Import, "parse") == (0, False)
    assert WorkAttempt.objects.get().attempts == 1  # not run again


def test_the_poll_queues_a_run_whose_queued_one_was_lost(clock, committed):
    with queued_on_the_broker, committed():
        record = Import.objects.create()
    OrmQ.objects.all().delete()  # lost: its mark is still held
    assert QueuedRun.objects.exists()
    clock.move_to(T + timedelta(minutes=5), tick=False)
    with queued_on_the_broker:
        assert poll("testapp.Import", ["step:parse"]) == {"step:parse": 1}
    assert runs_queued() == [("testapp.Import", "parse")]
    assert run_automatic_steps("testapp.Import", "parse") == 1
    assert Import.objects.get(pk=record.pk).state == "done"
    assert not TransitionLog.objects.filter(triggered_by="failed").exists()
