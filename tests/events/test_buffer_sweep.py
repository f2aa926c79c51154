"""The worker's sweep of buffered events (docs/events.md, "Early events: the buffer";
docs/settings.md): every ``BUFFER_SWEEP`` seconds a Schedule of the polling scheduler
applies the buffered events whose record can take them now and expires those past their
buffer, reading the buffered rows through their partial index."""

import ast

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.test import override_settings
from django_q.models import Schedule, Task

from django_workflow import deliver
from django_workflow.engine.buffering import buffered_rows
from django_workflow.models import EventDelivery, TransitionLog
from django_workflow.worker.schedulers.buffer_sweep import SWEEP_TASK, sweep_buffered
from django_workflow.worker.schedulers.polling import PollingScheduler, schedule_name
from django_workflow.worker.schedulers.scheduler import all_works
from tests.deadlines.test_indexes import plan_of
from tests.testapp.models import Payment

pytestmark = pytest.mark.django_db

SWEEP = schedule_name("buffered events", "workflow")


def outcome(delivery):
    return EventDelivery.objects.get(pk=delivery.row.pk).outcome


def sweep():
    """What the sweep Schedule runs, as django-q2 runs it."""
    schedule = Schedule.objects.get(name=SWEEP)
    return sweep_buffered(*ast.literal_eval(schedule.args))


@pytest.fixture
def synced():
    PollingScheduler().sync(all_works())


def test_the_sweep_expires_a_buffered_event_past_its_buffer(synced, time_machine):
    time_machine.move_to("2026-03-02 09:00Z", tick=False)
    early = deliver("psp.authorised", "pay_never", id="evt_1")
    time_machine.move_to("2026-03-03 09:00Z", tick=False)  # its buffer ("1d") just ends
    assert sweep() == {"buffered": 1}
    assert outcome(early) == "buffered"
    time_machine.move_to("2026-03-03 09:00:01Z", tick=False)
    assert sweep() == {"expired": 1}
    assert outcome(early) == "expired"
    assert sweep() == {}  # an expired event is no longer looked at


def test_the_sweep_applies_a_buffered_event_its_record_can_now_take(synced):
    payment = Payment.objects.create(psp_ref="draft_1")
    early = deliver("psp.authorised", "pay_1", id="evt_1")
    # A key given by QuerySet.update() is no move: nothing lets the event in but the sweep.
    Payment.objects.filter(pk=payment.pk).update(psp_ref="pay_1")
    assert outcome(early) == "buffered"

    assert sweep() == {"applied": 1}
    assert Payment.objects.get(pk=payment.pk).state == "authorised"
    moves = TransitionLog.objects.filter(object_id=str(payment.pk), triggered_by="event")
    assert list(moves.values_list("transition_name", "data")) == [
        ("authorise", {"event": "psp.authorised", "id": "evt_1"})
    ]
    assert sweep() == {}


def test_a_buffered_event_its_record_cannot_take_yet_stays_buffered(synced):
    Payment.objects.create(psp_ref="pay_1")
    early = deliver("psp.settled", "pay_1", id="evt_1")  # pending offers no settle
    assert sweep() == {"buffered": 1}
    assert outcome(early) == "buffered"


def test_the_worker_keeps_one_sweep_schedule_per_queue_of_the_buffering_models():
    scheduler, works = PollingScheduler(), all_works()
    scheduler.sync(works)
    schedule = Schedule.objects.get(name=SWEEP)
    assert (schedule.func, schedule.schedule_type, schedule.minutes) == (SWEEP_TASK, "I", 5)
    [labels] = ast.literal_eval(schedule.args)
    assert "testapp.Payment" in labels and "testapp.Tracking" not in labels  # no buffer
    assert ast.literal_eval(schedule.kwargs) == {"q_options": {"cluster": "workflow"}}
    with override_settings(DJANGO_WORKFLOW={"BUFFER_SWEEP": 60}):
        assert scheduler.sync(works)["updated"] == 1
        assert Schedule.objects.get(name=SWEEP).minutes == 1
    with override_settings(DJANGO_WORKFLOW={"BUFFER_SWEEP": None}):
        assert scheduler.sync(works)["removed"] == 1
        assert not Schedule.objects.filter(name=SWEEP).exists()


@pytest.mark.parametrize("value", [90, 0, -60, "5m", True])
def test_a_sweep_interval_that_is_no_whole_number_of_minutes_is_refused(value):
    refused = pytest.raises(ImproperlyConfigured, match=r"BUFFER_SWEEP.*whole number of minutes")
    with override_settings(DJANGO_WORKFLOW={"BUFFER_SWEEP": value}), refused:
        PollingScheduler().sync(all_works())
    assert not Schedule.objects.exists()


def test_the_worker_start_sweeps_at_once_on_its_queues(synced):
    payment = Payment.objects.create(psp_ref="draft_1")
    early = deliver("psp.authorised", "pay_1", id="evt_1")
    Payment.objects.filter(pk=payment.pk).update(psp_ref="pay_1")
    scheduler = PollingScheduler()
    scheduler.kick_off(all_works(), ["orders"])  # a worker of another queue
    assert outcome(early) == "buffered"
    scheduler.kick_off(all_works(), ["workflow"])  # the tests' tasks run in this process
    assert outcome(early) == "applied"
    assert Task.objects.filter(func=SWEEP_TASK, group=SWEEP).count() == 1


def test_the_sweep_reads_the_buffered_rows_through_their_partial_index():
    rows = buffered_rows(Payment, "default")
    with transaction.atomic():
        plan = plan_of(*rows.values("pk").query.sql_with_params())
    assert "workflow_event_buffered" in plan, plan
