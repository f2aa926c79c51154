"""``Step(on_enter=...)``: a durable effect run by the worker once per entry, retried,
never moving the record (docs/automatic-steps.md, "Effects on entering a step")."""

from datetime import timedelta

import pytest
from django_q.models import OrmQ

from django_workflow.models import WorkAttempt
from django_workflow.queueing import run_entry
from django_workflow.testing import run_due_work
from tests.moments import T
from tests.testapp.models import Shipment

pytestmark = pytest.mark.django_db


def printed(shipment):
    return Shipment.objects.get(pk=shipment.pk).labels_printed


def test_each_entry_runs_it_once_after_commit_and_the_record_stays(committed):
    with committed():
        shipment = Shipment.objects.create()
    assert printed(shipment) == 1  # queued on commit; the test settings run tasks inline
    assert Shipment.objects.get(pk=shipment.pk).state == "packing"
    run_due_work()
    assert printed(shipment) == 1  # once per entry
    with committed():
        shipment.ship()
        shipment.return_to_packing()
    assert printed(shipment) == 2  # a new entry, a new run


def test_a_lost_task_is_found_by_the_poll(clock):
    shipment = Shipment.objects.create()  # no commit captured: its task was never queued
    OrmQ.objects.all().delete()
    assert printed(shipment) == 0
    run_due_work()
    assert printed(shipment) == 1


def test_a_crash_mid_effect_runs_it_again_and_a_failure_is_retried(clock):
    shipment = Shipment.objects.create(printer_offline=True)
    run_due_work()
    attempt = WorkAttempt.objects.get(object_id=str(shipment.pk), work="enter:packing")
    assert (attempt.attempts, printed(shipment)) == (1, 0)
    Shipment.objects.filter(pk=shipment.pk).update(printer_offline=False)
    run_due_work()
    assert printed(shipment) == 0  # backing off for a minute
    clock.move_to(T + timedelta(minutes=1, seconds=1))
    run_due_work()
    assert printed(shipment) == 1
    assert Shipment.objects.get(pk=shipment.pk).state == "packing"


def test_the_task_of_a_record_that_left_the_step_does_nothing():
    shipment = Shipment.objects.create()
    shipment.ship()
    assert run_entry("testapp.Shipment", shipment.pk, "packing") is False
    assert printed(shipment) == 0


def test_an_effect_cut_short_by_a_crash_runs_again_without_spending_an_attempt(clock, monkeypatch):
    shipment = Shipment.objects.create()
    real = Shipment.print_label

    def killed(self):
        self.labels_printed += 1
        raise KeyboardInterrupt  # the process dies mid-effect: nothing commits

    monkeypatch.setattr(Shipment, "print_label", killed)
    with pytest.raises(KeyboardInterrupt):
        run_due_work()
    assert printed(shipment) == 0
    monkeypatch.setattr(Shipment, "print_label", real)
    run_due_work()
    assert printed(shipment) == 1
    assert not WorkAttempt.objects.filter(object_id=str(shipment.pk)).exists()
