"""Document approval, end to end with time travel."""

from datetime import timedelta

import pytest

from django_workflow import AlreadyVoted
from example_project.approvals.models import Document
from tests.helpers import fresh


@pytest.fixture
def in_review(clock):
    document = Document.objects.create(title="Travel policy")
    document.submit()
    return document


def test_two_different_people_must_approve(in_review, user_with):
    alice, bob = user_with("alice"), user_with("bob")
    in_review.approve(actor=alice)
    assert (fresh(in_review).state, fresh(in_review).votes("approve")) == ("in_review", [alice])
    with pytest.raises(AlreadyVoted):  # her second approval is not a second person's
        fresh(in_review).approve(actor=alice)
    fresh(in_review).approve(actor=bob)
    assert fresh(in_review).state == "approved"


def test_a_request_for_changes_vetoes_the_approvals_given_so_far(in_review, user_with):
    alice, bob = user_with("alice"), user_with("bob")
    in_review.approve(actor=alice)
    fresh(in_review).request_changes(actor=bob)
    document = fresh(in_review).submit()
    document.approve(actor=bob)
    assert fresh(document).state == "in_review"  # alice approved the earlier version
    assert fresh(document).votes("approve") == [bob]


def test_approvers_are_reminded_every_two_days_until_it_expires(in_review, clock):
    for day in range(1, 14):
        clock.at(in_review.state_entered_at + timedelta(days=day))
    assert (fresh(in_review).state, fresh(in_review).reminders_sent) == ("in_review", 6)
    clock.at(in_review.state_entered_at + timedelta(days=14))
    assert fresh(in_review).state == "expired"


def test_changes_requested_send_it_back_to_draft(in_review):
    in_review.request_changes()
    assert fresh(in_review).state == "draft"


def test_work_queues_offer_an_approval_to_anyone_who_has_not_given_one(in_review, user_with):
    alice, bob = user_with("alice"), user_with("bob")
    in_review.approve(actor=alice)
    assert fresh(in_review).available_actions(alice) == ["request_changes"]
    assert fresh(in_review).available_actions(bob) == ["approve", "request_changes"]
