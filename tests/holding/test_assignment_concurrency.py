"""Claims racing on one record on PostgreSQL (docs/holding-work.md): each claimant on a
connection of its own, the conditional UPDATE lets exactly one hold the record; the others
raise ``AlreadyClaimed`` and log nothing. A claim's ``release_after`` firing beside its
holder, another claimant or another worker ends consistent and is logged at most once."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.models.signals import pre_save
from django.utils import timezone

from django_workflow import AlreadyClaimed, StaleRecord, run_work
from django_workflow.models import TransitionLog
from tests import races
from tests.testapp.models import Errand

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def race(pk, calls):
    return races.race(Errand, pk, calls, (AlreadyClaimed, StaleRecord))


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


def held_too_long(holder):
    """A working errand whose claim by ``holder`` is due for release."""
    errand = Errand.objects.create().start().claim(holder)
    Errand.objects.filter(pk=errand.pk).update(assigned_at=timezone.now() - timedelta(days=2))
    return errand


def release_now(errand):
    return run_work(Errand, "release:working")


def released(errand):
    rows = TransitionLog.objects.filter(object_id=str(errand.pk), transition_name="release")
    return rows.count()


def test_a_holder_moving_the_record_as_its_claim_is_released_ends_consistent():
    alice = User.objects.create_user("alice")
    endings = set()
    for _ in range(20):
        errand = held_too_long(alice)
        outcomes = race(errand.pk, [release_now, lambda e: e.finish(actor=alice)])
        stored = Errand.objects.get(pk=errand.pk)
        if stored.state == "review":  # the holder won: nothing to release
            assert outcomes[1] == "done" and released(errand) == 0
        else:  # the release won: the holder's call found the claim gone
            assert outcomes[1] == "StaleRecord" and stored.assignee is None
            assert released(errand) == 1
        endings.add(stored.state)
    assert endings <= {"review", "working"}


def test_two_workers_release_a_claim_once():
    alice = User.objects.create_user("alice")
    for _ in range(10):
        errand = held_too_long(alice)
        assert race(errand.pk, [release_now, release_now]) == ["done", "done"]
        assert Errand.objects.get(pk=errand.pk).assignee is None
        assert released(errand) == 1


def test_a_claim_racing_the_release_ends_held_or_released_and_logged_once():
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    for _ in range(20):
        errand = held_too_long(alice)
        outcomes = race(errand.pk, [release_now, lambda e: e.claim(bob)])
        stored = Errand.objects.get(pk=errand.pk)
        assert released(errand) == 1
        if outcomes[1] == "done":  # claimed after the release committed
            assert stored.assignee == bob and claims(errand)[-1] == ("claim", bob.pk)
        else:
            assert outcomes[1] == "AlreadyClaimed" and stored.assignee is None


@pytest.mark.parametrize("listening", [False, True], ids=["update", "read-then-update"])
def test_a_claim_that_found_the_row_held_takes_it_when_the_release_commits_before_its_next_look(
    listening,
):
    """The release commits right after the claim's guarded statement: its ``UPDATE``, or
    with a ``pre_save`` receiver listening, the read of the row that ``UPDATE`` would write."""
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    errand = held_too_long(alice)
    opened_after = []

    def release_once_the_claim_found_it_held(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if '"assignee_id" IS NULL' in sql and not opened_after:
            opened_after.append(sql.split()[0])
            assert races.at_once([lambda: release_now(errand)]) == [1]
        return result

    listener = lambda **kwargs: None  # noqa: E731
    if listening:
        pre_save.connect(listener, sender=Errand)
    try:
        with connection.execute_wrapper(release_once_the_claim_found_it_held):
            errand.claim(bob)
    finally:
        pre_save.disconnect(listener, sender=Errand)
    assert opened_after == ["SELECT" if listening else "UPDATE"]
    assert Errand.objects.get(pk=errand.pk).assignee == bob and released(errand) == 1
    assert claims(errand)[-2:] == [("release", None), ("claim", bob.pk)]
