"""Two callers racing on one record on PostgreSQL: exactly one wins (docs/transitions.md)."""

import threading
from types import SimpleNamespace

import pytest
from django.db import connection, connections

from django_workflow import StaleRecord, TransitionNotAllowed
from django_workflow.models import TransitionLog
from tests.testapp.models import Routed

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def race(pk, calls):
    """Load the record in each thread, then fire all calls at once."""
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def run(index, name, kwargs):
        try:
            record = Routed.objects.get(pk=pk)
            barrier.wait()
            getattr(record, name)(actor=SimpleNamespace(thread=index), **kwargs)
            outcomes[index] = "won"
        except (StaleRecord, TransitionNotAllowed) as error:
            outcomes[index] = type(error).__name__
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=run, args=(i, name, kwargs))
        for i, (name, kwargs) in enumerate(calls)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_two_threads_deciding_one_record_have_one_winner():
    for _ in range(20):
        record = Routed.objects.create()
        outcomes = race(
            record.pk, [("decide", {"decision": "approve"}), ("decide", {"decision": "decline"})]
        )
        assert sorted(outcomes) == ["StaleRecord", "won"]
        stored = Routed.objects.get(pk=record.pk)
        winner = "approved" if stored.decision == "approve" else "declined"
        assert stored.state == winner
        rows = TransitionLog.objects.filter(object_id=str(record.pk), triggered_by="manual")
        assert list(rows.values_list("to_state", flat=True)) == [winner]


def test_four_threads_one_winner_and_a_consistent_row():
    record = Routed.objects.create(amount=500)
    outcomes = race(record.pk, [("size", {})] * 4)
    assert sorted(outcomes) == ["StaleRecord"] * 3 + ["won"]
    assert Routed.objects.get(pk=record.pk).state == "large"
    assert TransitionLog.objects.filter(object_id=str(record.pk)).count() == 2
