"""The hiring pipeline, end to end with time travel."""

from datetime import timedelta

import pytest

from django_workflow import UndoNotPermitted, WorkflowPermissionDenied
from example_project.hiring.models import Candidate
from tests.helpers import fresh


@pytest.fixture
def manager(user_with):
    return user_with("manager", "decide_candidate")


@pytest.fixture
def recruiter(user_with):
    return user_with("recruiter", "screen_candidate")


def interviewed(clock):
    candidate = Candidate.objects.create(name="Ada", resume="python django sql review")
    clock.after(timedelta(0))  # screening, then booking the interview
    assert fresh(candidate).state == "awaiting_interview"
    assert fresh(candidate).interview_at == clock.now + timedelta(days=2)
    clock.after(timedelta(days=2))  # the interview date on the record arrives
    assert fresh(candidate).state == "decision"
    return fresh(candidate)


def test_a_strong_candidate_goes_from_screening_to_hired(clock, manager):
    candidate = interviewed(clock)
    clock.after(timedelta(seconds=44))
    assert fresh(candidate).nudges_sent == 0
    clock.after(timedelta(seconds=1))  # a 45-second nudge on the precise scheduler
    assert fresh(candidate).nudges_sent == 1
    fresh(candidate).make_offer(actor=manager)
    clock.after(timedelta(0))  # the offer goes out
    assert fresh(candidate).state == "offer_sent"
    fresh(candidate).accept(actor=manager)
    assert fresh(candidate).state == "hired"


def test_a_weak_resume_is_rejected_by_the_score_route(clock):
    candidate = Candidate.objects.create(name="Bob", resume="c kernels")
    clock.after(timedelta(0))
    assert (fresh(candidate).state, fresh(candidate).score) == ("rejected", 0)


def test_screening_is_retried_then_fails_and_a_recruiter_rescreens(clock, recruiter, manager):
    candidate = Candidate.objects.create(name="Cy", resume="")
    clock.after(timedelta(0))
    assert fresh(candidate).state == "screening"  # attempt 1 failed, retried after 30 s
    clock.after(timedelta(seconds=30))
    clock.after(timedelta(seconds=30))
    assert fresh(candidate).state == "screening_failed"
    Candidate.objects.filter(pk=candidate.pk).update(resume="python testing design")
    with pytest.raises(WorkflowPermissionDenied):
        fresh(candidate).rescreen(actor=manager)  # hiring managers do not screen
    fresh(candidate).rescreen(actor=recruiter)
    clock.after(timedelta(0))
    assert fresh(candidate).state == "awaiting_interview"


def test_decisions_belong_to_hiring_managers_and_can_be_undone_for_30_minutes(
    clock, manager, recruiter
):
    candidate = interviewed(clock)
    with pytest.raises(WorkflowPermissionDenied):
        candidate.reject(actor=recruiter)
    candidate.reject(actor=manager)
    clock.after(timedelta(minutes=29))
    fresh(candidate).undo(actor=manager)
    assert fresh(candidate).state == "decision"
    fresh(candidate).reject(actor=manager)
    clock.after(timedelta(minutes=31))
    with pytest.raises(UndoNotPermitted) as refused:
        fresh(candidate).undo(actor=manager)
    assert refused.value.reason == "window_expired"


def test_an_unanswered_offer_is_reminded_then_expires(clock, manager):
    candidate = interviewed(clock)
    candidate.make_offer(actor=manager)
    clock.after(timedelta(0))
    clock.after(timedelta(days=2))
    assert (fresh(candidate).state, fresh(candidate).reminders_sent) == ("offer_sent", 1)
    clock.after(timedelta(days=5))
    assert fresh(candidate).state == "declined"
