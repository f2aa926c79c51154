"""Voters racing on one record on PostgreSQL (docs/votes.md): each on a connection of its
own, they count one after another under the record's row lock, so exactly one vote moves
the record and no vote counts twice."""

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections

from django_workflow import AlreadyVoted, StaleRecord
from django_workflow.models import TransitionLog, WorkflowVote
from example_project.approvals.models import Document

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def race(pk, voters):
    """Each voter loads the record on a connection of its own, then all vote at once;
    returns each call's outcome: "voted" or the error's class name."""
    barrier = threading.Barrier(len(voters))
    outcomes = [None] * len(voters)

    def run(index, voter):
        try:
            document = Document.objects.get(pk=pk)
            barrier.wait()
            document.approve(actor=voter)
            outcomes[index] = "voted"
        except (AlreadyVoted, StaleRecord) as error:
            outcomes[index] = type(error).__name__
        except Exception as error:  # a deadlock or any other surprise: the test says which
            outcomes[index] = repr(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, v)) for i, v in enumerate(voters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def submitted():
    return Document.objects.create(title="Budget").submit()


def test_twenty_voters_with_a_quorum_of_two_move_the_record_once():
    people = [User.objects.create_user(f"voter{n}") for n in range(20)]
    for _ in range(5):
        document = submitted()
        outcomes = race(document.pk, people)
        # Two votes counted (the second moved the record); every later call found it moved.
        assert sorted(outcomes) == ["StaleRecord"] * 18 + ["voted"] * 2
        assert Document.objects.get(pk=document.pk).state == "approved"
        log = TransitionLog.objects.filter(object_id=str(document.pk))
        votes = log.filter(triggered_by="vote")
        assert votes.count() == 2 and votes.values("actor").distinct().count() == 2
        # The votes counted are the two calls told "voted", the second of them moved it.
        told = {people[i].pk for i, outcome in enumerate(outcomes) if outcome == "voted"}
        assert set(votes.values_list("actor", flat=True)) == told
        [move] = log.filter(to_state="approved")
        assert move.triggered_by == "manual" and move.actor_id == votes.latest("id").actor_id
        assert not WorkflowVote.objects.filter(object_id=str(document.pk)).exists()  # discarded


def test_the_same_actor_voting_twice_at_once_counts_once():
    alice = User.objects.create_user("alice")
    for _ in range(10):
        document = submitted()
        outcomes = race(document.pk, [alice, alice])
        assert sorted(outcomes) == ["AlreadyVoted", "voted"]
        stored = Document.objects.get(pk=document.pk)
        assert stored.state == "in_review" and stored.votes("approve") == [alice]
        log = TransitionLog.objects.filter(object_id=str(document.pk), triggered_by="vote")
        assert log.count() == 1
