"""Voters racing on one record on PostgreSQL (docs/votes.md): each on a connection of its
own, they count one after another under the record's row lock, so exactly one vote moves
the record and no vote counts twice."""

import pytest
from django.contrib.auth.models import User
from django.db import connection

from django_workflow import AlreadyVoted, StaleRecord
from django_workflow.models import TransitionLog, WorkflowVote
from example_project.approvals.models import Document
from tests import races

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def race(pk, voters):
    """Each voter approves at once, on a connection of its own: "voted" or the refusal."""
    calls = [lambda document, voter=voter: document.approve(actor=voter) for voter in voters]
    return races.race(Document, pk, calls, (AlreadyVoted, StaleRecord), done="voted")


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
