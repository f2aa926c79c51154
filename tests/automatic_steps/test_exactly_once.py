"""Several processes running the same due work fire each record exactly once (docs/worker.md)."""

import multiprocessing
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.db.models import Count
from django.utils import timezone

from django_workflow import run_work
from django_workflow.models import TransitionLog
from tests.testapp.models import Batch, SideEffect

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="concurrent claims need PostgreSQL row locks"
    ),
]

RECORDS = 10_000
PROCESSES = 4


def _run(work_name, now, results):
    try:
        results.put(run_work(Batch, work_name, now=now, batch_size=200))
    finally:
        connections.close_all()


def run_in_processes(work_name, now):
    connections.close_all()  # children must not share the parent's connection
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [
        context.Process(target=_run, args=(work_name, now, results)) for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    counts = [results.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    return counts


@pytest.fixture
def due_batch():
    Batch.objects.bulk_create([Batch() for _ in range(RECORDS)], batch_size=2000)
    return timezone.now()


def test_four_processes_run_each_action_exactly_once(due_batch):
    counts = run_in_processes("timeout:waiting.ping", due_batch + timedelta(days=1))
    assert sum(counts) == RECORDS
    assert sum(1 for count in counts if count) > 1  # the work was really shared
    assert SideEffect.objects.count() == RECORDS
    assert not SideEffect.objects.values("batch").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert not Batch.objects.filter(waiting_ping_fired_at__isnull=True).exists()
    assert TransitionLog.objects.filter(transition_name="ping").count() == RECORDS


def test_four_processes_move_each_record_exactly_once(due_batch):
    counts = run_in_processes("timeout:waiting.expire", due_batch + timedelta(days=2))
    assert sum(counts) == RECORDS
    assert Batch.objects.filter(state="expired").count() == RECORDS
    moves = TransitionLog.objects.filter(triggered_by="timeout", to_state="expired")
    assert moves.count() == RECORDS
    assert not moves.values("object_id").annotate(n=Count("id")).filter(n__gt=1).exists()
