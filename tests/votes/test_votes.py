"""Votes (docs/votes.md): ``Transition(..., quorum=N)`` moves a record once N different
actors called it in one stay; the approvals example's ``approve`` needs two."""

import pytest
from django.contrib.auth.models import User

from django_workflow import (
    AlreadyVoted,
    StaleRecord,
    Step,
    Transition,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)
from django_workflow.checks import check_model
from django_workflow.errors import staff_text
from django_workflow.models import TransitionLog, WorkflowVote
from example_project.approvals.models import Document
from tests.helpers import fresh

pytestmark = pytest.mark.django_db


@pytest.fixture
def people():
    return [User.objects.create_user(name) for name in ("alice", "bob", "carol")]


@pytest.fixture
def in_review():
    document = Document.objects.create(title="Travel policy")
    return document.submit()


def rows(document, trigger):
    found = TransitionLog.objects.filter(object_id=str(document.pk), triggered_by=trigger)
    return list(found.values_list("transition_name", "actor_repr", "data"))


def test_a_vote_below_the_quorum_is_logged_and_leaves_the_record_in_its_step(in_review, people):
    alice = people[0]
    in_review.approve(actor=alice, comment="Reads well")
    assert fresh(in_review).state == "in_review"
    assert fresh(in_review).votes("approve") == [alice]
    [row] = TransitionLog.objects.filter(object_id=str(in_review.pk), triggered_by="vote")
    assert (row.from_state, row.to_state, row.actor, row.comment) == (
        "in_review",
        "in_review",
        alice,
        "Reads well",
    )


def test_the_vote_reaching_the_quorum_moves_the_record(in_review, people):
    alice, bob, _ = people
    in_review.approve(actor=alice)
    fresh(in_review).approve(actor=bob)
    assert fresh(in_review).state == "approved"
    assert [name for name, *_ in rows(in_review, "vote")] == ["approve", "approve"]
    assert rows(in_review, "manual")[-1][:2] == ("approve", "bob")


def test_the_same_actor_voting_again_is_refused_and_counts_once(in_review, people):
    alice = people[0]
    in_review.approve(actor=alice)
    with pytest.raises(AlreadyVoted) as refused:
        fresh(in_review).approve(actor=alice)
    assert isinstance(refused.value, TransitionNotAllowed)
    assert "alice already voted for transition 'approve'" in str(refused.value)
    assert "alice already voted for “Approve”" in staff_text(refused.value)
    assert fresh(in_review).state == "in_review"
    assert fresh(in_review).votes("approve") == [alice]
    assert len(rows(in_review, "vote")) == 1


def test_available_actions_omit_a_transition_the_actor_voted_for(in_review, people):
    alice, bob, _ = people
    in_review.approve(actor=alice)
    assert fresh(in_review).available_actions(alice) == ["request_changes"]
    assert fresh(in_review).available_actions(bob) == ["approve", "request_changes"]


def test_leaving_the_step_discards_the_votes_of_that_stay(in_review, people):
    alice, bob, carol = people
    in_review.approve(actor=alice)
    fresh(in_review).request_changes(actor=carol)  # a veto: one call sends it back
    document = fresh(in_review).submit()
    assert document.votes("approve") == []
    document.approve(actor=bob)  # the first vote of the new stay: alice's is not counted
    assert fresh(document).state == "in_review"
    document = fresh(document)
    document.approve(actor=alice)  # she may vote again in the new stay
    assert fresh(document).state == "approved"
    voters = [actor for _, actor, _ in rows(document, "vote")]
    assert voters == ["alice", "bob", "alice"]  # the discarded vote stays in the history
    assert not WorkflowVote.objects.filter(object_id=str(document.pk)).exists()


def test_votes_cast_at_the_instant_of_an_earlier_stay_are_not_counted(clock, people):
    """A stopped clock gives both stays one entry instant: the move itself discards."""
    alice, bob, carol = people
    document = Document.objects.create(title="Frozen").submit()
    document.approve(actor=alice)
    fresh(document).request_changes(actor=carol)
    document = fresh(document).submit()
    document.approve(actor=bob)
    assert fresh(document).state == "in_review"
    assert fresh(document).votes("approve") == [bob]


def test_a_bulk_move_discards_the_votes_of_each_record(people):
    alice, bob, _ = people
    documents = [Document.objects.create(title=f"D{n}").submit() for n in range(2)]
    for document in documents:
        document.approve(actor=alice)
    Document.objects.filter(state="in_review").transition("request_changes", actor=bob)
    assert not WorkflowVote.objects.exists()


def test_retracting_withdraws_ones_own_vote_and_is_logged(in_review, people):
    alice, bob, carol = people
    in_review.approve(actor=alice)
    fresh(in_review).retract("approve", actor=alice)
    assert fresh(in_review).votes("approve") == []
    assert rows(in_review, "vote")[-1] == ("approve", "alice", {"retract": True})
    fresh(in_review).approve(actor=bob)
    assert fresh(in_review).state == "in_review"  # alice's vote no longer counts
    fresh(in_review).approve(actor=carol)
    assert fresh(in_review).state == "approved"


def test_the_history_reads_votes_and_retractions_by_the_transitions_label(in_review, people):
    from django_workflow.reading.wording import row_label, trigger_words

    in_review.approve(actor=people[0])
    fresh(in_review).retract("approve", actor=people[0])
    rows = TransitionLog.objects.filter(object_id=str(in_review.pk), triggered_by="vote")
    words = [(row_label(Document.workflow, row), trigger_words(row)) for row in rows]
    assert words == [("Approve", "vote"), ("Vote for “Approve” withdrawn", "vote")]


def test_retracting_without_a_vote_is_refused_and_changes_nothing(in_review, people):
    alice = people[0]
    with pytest.raises(TransitionNotAllowed, match="alice has no vote"):
        in_review.retract("approve", actor=alice)
    with pytest.raises(TransitionNotAllowed):
        in_review.retract("request_changes", actor=alice)  # no vote at all
    assert rows(in_review, "vote") == []


def test_a_vote_without_an_actor_is_refused(in_review):
    with pytest.raises(WorkflowPermissionDenied):
        in_review.approve()
    assert not WorkflowVote.objects.exists()
    assert fresh(in_review).state == "in_review"


def test_a_vote_on_an_instance_of_an_earlier_stay_is_stale(in_review, people):
    alice, bob, _ = people
    loaded = fresh(in_review)
    fresh(in_review).request_changes(actor=bob)
    fresh(in_review).submit()  # in review again: another stay
    with pytest.raises(StaleRecord):
        loaded.approve(actor=alice)
    assert not WorkflowVote.objects.exists()


def test_the_report_does_not_count_a_vote_as_leaving_the_step(in_review, people):
    from django_workflow.report.stays import ended_stays

    in_review.approve(actor=people[0])
    since = in_review.state_entered_at
    until = since.replace(year=since.year + 1)
    assert list(ended_stays(Document, "default", since, until)) == []


def test_a_bulk_call_votes_on_each_record(people):
    alice, bob, _ = people
    documents = [Document.objects.create(title=f"D{n}").submit() for n in range(2)]
    in_review = Document.objects.filter(state="in_review")
    assert set(in_review.transition("approve", actor=alice).values()) == {"in_review"}
    again = Document.objects.filter(state="in_review").transition("approve", actor=alice)
    assert all(isinstance(outcome, AlreadyVoted) for outcome in again.values())
    moved = Document.objects.filter(state="in_review").transition("approve", actor=bob)
    assert moved == {document.pk: "approved" for document in documents}


# The declaration's checks (docs/checks.md) ------------------------------------------


@pytest.mark.parametrize("quorum", [0, -1, "2", True, 1.5])
def test_a_quorum_that_is_no_whole_number_of_at_least_one_is_an_error(declare, quorum):
    class Workflow:
        review = Step(Transition("approve", to="done", quorum=quorum))
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E053"
    assert f"quorum={quorum!r}" in error.msg and "quorum=2" in error.hint


def test_a_quorum_out_of_an_automatic_step_is_an_error(declare):
    class Workflow:
        review = Step(Transition("approve", to="done", quorum=2), action="act", on_success="done")
        done = Step()

    errors = check_model(declare(Workflow, act=lambda self: None))
    [error] = [e for e in errors if e.id == "django_workflow.E054"]
    assert "automatic" in error.msg and "manual step" in error.hint


def test_a_quorum_of_one_or_more_in_a_manual_step_is_accepted(declare):
    class Workflow:
        review = Step(Transition("approve", to="done", quorum=1))
        done = Step()
        from_any_step = [Transition("sign_off", to="done", quorum=3)]

    assert check_model(declare(Workflow)) == []
