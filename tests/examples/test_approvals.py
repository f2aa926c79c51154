"""Document approval, end to end with time travel."""

from datetime import timedelta

import pytest

from django_workflow import WorkflowPermissionDenied
from example_project.approvals.models import Document


def fresh(document):
    return Document.objects.get(pk=document.pk)


@pytest.fixture
def in_review(clock):
    document = Document.objects.create(title="Travel policy")
    document.submit()
    return document


def test_two_different_people_must_sign_off(in_review, user_with):
    alice, bob = user_with("alice"), user_with("bob")
    in_review.sign(alice)
    assert (fresh(in_review).state, fresh(in_review).first_signer) == ("second_review", "alice")
    with pytest.raises(WorkflowPermissionDenied):
        fresh(in_review).sign(alice)
    fresh(in_review).sign(bob)
    assert (fresh(in_review).state, fresh(in_review).second_signer) == ("approved", "bob")


def test_a_sign_off_names_the_person_signing_never_someone_typed_in(in_review, user_with):
    alice = user_with("alice")
    for typed in ("bob", ""):
        with pytest.raises(WorkflowPermissionDenied):
            fresh(in_review).approve(actor=alice, first_signer=typed)
    fresh(in_review).approve(actor=alice, first_signer="alice")
    with pytest.raises(WorkflowPermissionDenied):  # her own name again, as the second signer
        fresh(in_review).approve(actor=alice, second_signer="alice")
    assert (fresh(in_review).state, fresh(in_review).second_signer) == ("second_review", "")


def test_approvers_are_reminded_every_two_days_until_it_expires(in_review, clock):
    for day in range(1, 14):
        clock.at(in_review.state_entered_at + timedelta(days=day))
    assert (fresh(in_review).state, fresh(in_review).reminders_sent) == ("in_review", 6)
    clock.at(in_review.state_entered_at + timedelta(days=14))
    assert fresh(in_review).state == "expired"


def test_changes_requested_send_it_back_to_draft(in_review):
    in_review.request_changes()
    assert fresh(in_review).state == "draft"


def test_work_queues_offer_a_second_sign_off_to_anyone_but_the_first_signer(in_review, user_with):
    alice, bob = user_with("alice"), user_with("bob")
    in_review.sign(alice)
    signable = Document.workflow.policy_for("second_review", "approve").q
    assert not Document.objects.filter(signable(alice)).exists()
    assert list(Document.objects.filter(signable(bob))) == [in_review]
    assert not Document.objects.filter(signable(None)).exists()
