"""Bulk moves that commit for real, over more records than one batch, into steps whose
work follows the entry (docs/transitions.md, "Moving many records at once").

Each group commits on its own and its automatic steps and ``on_enter`` effects are
queued as it commits; nothing of the call may still be reading then (SQLite cannot
let a connection that keeps a reader open commit beside another writer).
"""

import threading
import time
from types import SimpleNamespace

import pytest
from django.db import connections, transaction
from django_q.conf import Conf
from django_q.models import OrmQ

from django_workflow.engine.bulk import BATCH_SIZE
from django_workflow.engine.steps import run_steps
from tests.testapp.models import Candidate, Shipment, Ticket

pytestmark = pytest.mark.django_db(transaction=True)

MANY = BATCH_SIZE + 100


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    """Tasks go to django-q2's ORM broker, as in production, instead of running inline."""
    monkeypatch.setattr(Conf, "SYNC", False)


def tasks(name):
    return sum(name in task.task["func"] for task in OrmQ.objects.all())


def candidates_in_interview(count):
    Candidate._base_manager.bulk_create([Candidate(name=f"c{n}") for n in range(count)])
    Candidate._base_manager.update(state="interview")
    return set(Candidate.objects.values_list("pk", flat=True))


def shipments_shipped(count):
    Shipment._base_manager.bulk_create([Shipment() for _ in range(count)])
    Shipment._base_manager.update(state="shipped")
    return set(Shipment.objects.values_list("pk", flat=True))


def test_every_record_enters_an_automatic_step_and_its_action_is_queued():
    keys = candidates_in_interview(MANY)
    recruiter = SimpleNamespace(role="recruiter")
    outcomes = Candidate.objects.all().transition("rescreen", actor=recruiter)
    assert outcomes == dict.fromkeys(keys, "screening")
    assert Candidate.objects.filter(state="screening").count() == MANY
    assert tasks("run_automatic_steps") == 1  # one run of the step takes every record
    assert run_steps(Candidate, "screening", budget=600) == (MANY, False)
    assert not Candidate.objects.filter(state="screening").exists()


def test_every_record_enters_a_step_with_an_effect_and_each_effect_is_queued():
    keys = shipments_shipped(MANY)
    outcomes = Shipment.objects.all().transition("return_to_packing")
    assert outcomes == dict.fromkeys(keys, "packing")
    assert Shipment.objects.filter(state="packing").count() == MANY
    assert tasks("run_entry") == MANY


class Writer(threading.Thread):
    """Another writer on the same database, writing as often as it may until told to stop."""

    def __init__(self) -> None:
        super().__init__()
        self.done = threading.Event()
        self.writes = 0
        self.error: Exception | None = None

    def run(self) -> None:
        ticket = Ticket.objects.create()
        try:
            while not self.done.is_set():
                with transaction.atomic():
                    Ticket._base_manager.filter(pk=ticket.pk).update(reopened=self.writes)
                self.writes += 1
                time.sleep(0.01)
        except Exception as error:  # reported by the test
            self.error = error
        finally:
            connections.close_all()


def test_a_concurrent_writer_neither_fails_the_call_nor_fails_itself():
    keys = shipments_shipped(MANY)
    writer = Writer()
    writer.start()
    try:
        outcomes = Shipment.objects.all().transition("return_to_packing")
    finally:
        writer.done.set()
        writer.join()
    assert writer.error is None and writer.writes > 0
    assert outcomes == dict.fromkeys(keys, "packing")
    assert tasks("run_entry") == MANY
