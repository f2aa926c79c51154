"""Claims racing on one record on PostgreSQL (docs/holding-work.md): each claimant on a
connection of its own, the conditional UPDATE lets exactly one hold the record; the others
raise ``AlreadyClaimed`` and log nothing."""

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections

from django_workflow import AlreadyClaimed
from django_workflow.models import TransitionLog
from tests.testapp.models import Errand

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def race(pk, calls):
    """Each call gets the record loaded on a connection of its own, then all run at once;
    returns each call's outcome: "done" or the error's class name."""
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def run(index, call):
        try:
            errand = Errand.objects.get(pk=pk)
            barrier.wait()
            call(errand)
            outcomes[index] = "done"
        except AlreadyClaimed as error:
            outcomes[index] = type(error).__name__
        except Exception as error:  # a deadlock or any other surprise: the test says which
            outcomes[index] = repr(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def claims(errand):
    rows = TransitionLog.objects.filter(object_id=str(errand.pk), triggered_by="assignment")
    return list(rows.values_list("transition_name", "actor_id"))


def test_twenty_concurrent_claims_leave_exactly_one_holder():
    people = [User.objects.create_user(f"agent{n}") for n in range(20)]
    for _ in range(5):
        errand = Errand.objects.create().start()
        outcomes = race(errand.pk, [lambda e, p=p: e.claim(p) for p in people])
        assert sorted(outcomes) == ["AlreadyClaimed"] * 19 + ["done"]
        winner = people[outcomes.index("done")]
        assert Errand.objects.get(pk=errand.pk).assignee == winner
        assert claims(errand) == [("claim", winner.pk)]
