"""Two callers racing on one record on PostgreSQL: exactly one wins (docs/transitions.md)."""

from types import SimpleNamespace

import pytest
from django.db import connection

from django_workflow import StaleRecord, TransitionNotAllowed
from django_workflow.models import TransitionLog
from tests import races
from tests.testapp.models import Routed

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def race(pk, calls):
    """Each ``(transition, values)`` called at once by an actor of its own."""

    def call(index, name, values):
        return lambda record: getattr(record, name)(actor=SimpleNamespace(thread=index), **values)

    moves = [call(index, name, values) for index, (name, values) in enumerate(calls)]
    return races.race(Routed, pk, moves, (StaleRecord, TransitionNotAllowed), done="won")


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
