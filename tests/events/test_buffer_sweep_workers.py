"""Two workers sweeping buffered events at once (docs/events.md, "Early events: the
buffer"): real ``manage.py workflow_worker`` subprocesses started together, each sweeping
at its start; every buffered event is applied or expired exactly once."""

from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from django_q.models import Task

from django_workflow import deliver
from django_workflow.models import EventDelivery, TransitionLog
from django_workflow.worker.schedulers.buffer_sweep import SWEEP_TASK
from tests.processes import wait_for, workers_at_once
from tests.testapp.models import Payment

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

#: On SQLite the worker paces its writes to let other writers in (docs/worker.md), so a
#: sweep settles a few events a second there: fewer, within django-q2's task timeout.
WAITING, TOO_OLD = (200, 60) if connection.vendor == "postgresql" else (30, 10)


def buffered_for_the_sweep(time_machine):
    """Events no move will let in: ``WAITING`` whose payments got their reference by
    ``QuerySet.update()``, and ``TOO_OLD`` for no payment, delivered two days ago."""
    time_machine.move_to(timezone.now() - timedelta(days=2), tick=True)
    for n in range(TOO_OLD):
        deliver("psp.authorised", f"pay_gone_{n}", id=f"old_{n}")
    time_machine.move_to(timezone.now() + timedelta(days=2), tick=True)
    payments = [Payment.objects.create(psp_ref=f"draft_{n}") for n in range(WAITING)]
    for n in range(WAITING):
        deliver("psp.authorised", f"pay_{n}", id=f"evt_{n}")
    for n, payment in enumerate(payments):
        Payment.objects.filter(pk=payment.pk).update(psp_ref=f"pay_{n}")
    assert EventDelivery.objects.filter(outcome="buffered").count() == WAITING + TOO_OLD
    return payments


def test_two_workers_sweeping_at_once_settle_each_buffered_event_once(tmp_path, time_machine):
    payments = buffered_for_the_sweep(time_machine)
    sweeps = Task.objects.filter(func=SWEEP_TASK, success=True)
    with workers_at_once(tmp_path, "first", "second"):
        wait_for(lambda: sweeps.count() == 2, 120, "each worker's first sweep")

    outcomes = Counter(EventDelivery.objects.values_list("outcome", flat=True))
    assert outcomes == {"applied": WAITING, "expired": TOO_OLD}
    assert set(Payment.objects.values_list("state", flat=True)) == {"authorised"}
    moves = TransitionLog.objects.filter(triggered_by="event")
    per_payment = Counter(moves.values_list("object_id", flat=True))
    assert per_payment == {str(payment.pk): 1 for payment in payments}
