"""``Step(claim=True, release_after="1d")`` (docs/holding-work.md): a claim that has not
moved the record within a day is let go by the worker, through the stored ``next_due_at``,
logged once with trigger ``assignment``."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from tests.helpers import fresh
from tests.moments import T
from tests.testapp.models import Errand

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return User.objects.create_user("alice")


def releases(errand):
    rows = TransitionLog.objects.filter(object_id=str(errand.pk), transition_name="release")
    return list(rows.values_list("actor_repr", "data"))


def claimed(alice):
    errand = Errand.objects.create().start()
    return errand.claim(alice)


def test_a_claim_starts_the_release_clock(clock, alice):
    errand = claimed(alice)
    assert fresh(errand).next_due_at == T + timedelta(days=1)


def test_a_claim_held_a_day_without_a_move_is_released_once(clock, alice):
    errand = claimed(alice)
    clock.move_to(T + timedelta(days=1) - timedelta(seconds=1))
    run_due_work()
    assert fresh(errand).assignee == alice
    clock.move_to(T + timedelta(days=1))
    run_due_work()
    run_due_work()
    stored = fresh(errand)
    assert (stored.state, stored.assignee, stored.assigned_at, stored.next_due_at) == (
        "working",
        None,
        None,
        None,
    )
    assert releases(errand) == [("", {"assignee": None, "released": "alice", "after": "1d"})]


def test_a_record_moved_by_its_holder_is_not_released(clock, alice):
    errand = claimed(alice)
    fresh(errand).finish(actor=alice)
    assert fresh(errand).next_due_at is None
    clock.move_to(T + timedelta(days=2))
    run_due_work()
    assert releases(errand) == []


def test_a_claim_taken_again_counts_from_its_own_instant(clock, alice):
    errand = claimed(alice)
    clock.move_to(T + timedelta(hours=20))
    fresh(errand).release(alice)
    fresh(errand).claim(alice)
    clock.move_to(T + timedelta(days=1, hours=1))
    run_due_work()
    assert fresh(errand).assignee == alice
    clock.move_to(T + timedelta(days=1, hours=20))
    run_due_work()
    assert fresh(errand).assignee is None
    assert [row[0] for row in releases(errand)] == ["alice", ""]  # by hand, then the worker


def test_a_stale_due_instant_releases_nothing_and_is_computed_again(clock, alice):
    errand = claimed(alice)
    clock.move_to(T + timedelta(hours=12))
    fresh(errand).release(alice)
    fresh(errand).claim(alice)
    Errand.objects.filter(pk=errand.pk).update(next_due_at=T)  # as if left stale
    run_due_work()
    assert fresh(errand).assignee == alice
    assert fresh(errand).next_due_at == T + timedelta(hours=12, days=1)


def test_the_release_is_a_unit_of_work_with_a_stable_name():
    [work] = [w for w in Errand.workflow.works if w.kind == "release"]
    assert (work.name, work.step) == ("release:working", "working")
    assert work.deadline.field == "assigned_at"
