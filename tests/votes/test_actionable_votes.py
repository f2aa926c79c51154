"""Votes in work queues (docs/votes.md, docs/work-queues.md): ``actionable_by(actor)`` and
the inbox do not offer a record for a ``quorum`` transition the actor already voted for in
the record's stay; a record whose every offered transition they voted for is not theirs
to act on. Equal to asking ``available_actions`` of every record, in one query when every
policy has a filter."""

import random
from datetime import timedelta

import pytest
import rules
from django.contrib.auth.models import Permission, User

from django_workflow import inbox
from tests.helpers import fresh
from tests.testapp.models import Motion

pytestmark = pytest.mark.django_db

MODEL_BACKEND_ONLY = ["django.contrib.auth.backends.ModelBackend"]


@pytest.fixture
def members():
    """Three members who may vote on every motion, and a guest whom django-rules lets
    vote on the motions with an even key only (asked record by record)."""
    may_vote = Permission.objects.get(codename="change_motion")
    people = [User.objects.create_user(name) for name in ("ann", "bob", "cy")]
    for person in people:
        person.user_permissions.add(may_vote)
    guest = User.objects.create_user("guest")
    rules.add_perm("testapp.change_motion", rules.predicate(lambda user, motion: even(motion)))
    yield [User.objects.get(pk=person.pk) for person in people] + [guest]
    rules.remove_perm("testapp.change_motion")


def even(motion):
    return motion is not None and motion.pk % 2 == 0


def listed(actor):
    keys = list(Motion.objects.actionable_by(actor).values_list("pk", flat=True))
    assert len(keys) == len(set(keys))
    return set(keys)


def asked(actor):
    """The definition: every motion asked for its actions."""
    return {m.pk for m in Motion.objects.all() if m.available_actions(actor)}


@pytest.mark.parametrize("backends", ["model backend only", "with django-rules"])
def test_a_member_who_voted_for_every_offered_transition_is_not_offered_the_motion(
    members, settings, backends
):
    if backends == "model backend only":
        settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    ann, bob, cy, _ = members
    motion = Motion.objects.create(mover=ann)
    motion.carry(actor=bob)
    assert motion.pk in listed(bob)  # "reject" is still his to vote for
    fresh(motion).reject(actor=bob)
    assert fresh(motion).available_actions(bob) == []
    assert motion.pk not in listed(bob)
    assert motion.pk in listed(cy)
    fresh(motion).carry(actor=ann)  # the second vote for "carry" carries the motion
    assert fresh(motion).state == "carried"


@pytest.mark.parametrize("backends", ["model backend only", "with django-rules"])
def test_the_mover_who_voted_keeps_the_motion_for_withdrawing_it(members, settings, backends):
    if backends == "model backend only":
        settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    ann, bob, _, _ = members
    motion = Motion.objects.create(mover=ann)
    motion.carry(actor=ann)
    fresh(motion).reject(actor=ann)
    assert fresh(motion).available_actions(ann) == ["withdraw"]
    assert motion.pk in listed(ann)
    urgent = Motion.objects.create(mover=ann, urgent=True)  # "reject" is not offered
    urgent.carry(actor=bob)
    assert urgent.pk not in listed(bob)


def test_a_guest_asked_record_by_record_is_not_offered_what_they_voted_for(members):
    *_, guest = members
    motions = [Motion.objects.create() for _ in range(4)]
    assert listed(guest) == {m.pk for m in motions if even(m)} == asked(guest)
    voted = next(m for m in motions if even(m))
    voted.carry(actor=guest)
    assert voted.pk in listed(guest)
    fresh(voted).reject(actor=guest)
    assert voted.pk not in listed(guest)
    assert listed(guest) == asked(guest)


def test_a_retracted_vote_offers_the_motion_again(members):
    _, bob, _, _ = members
    motion = Motion.objects.create(urgent=True)
    motion.carry(actor=bob)
    assert motion.pk not in listed(bob)
    fresh(motion).retract("carry", actor=bob)
    assert motion.pk in listed(bob)
    assert fresh(motion).available_actions(bob) == ["carry"]


def test_votes_of_an_earlier_stay_do_not_count(members):
    """A step change written by raw SQL leaves the votes of the stay it ended behind: they
    name that stay's entry instant, so they no longer keep the motion from the voter."""
    _, bob, _, _ = members
    motion = Motion.objects.create(urgent=True)
    motion.carry(actor=bob)
    later = fresh(motion).state_entered_at + timedelta(seconds=1)
    Motion.objects.filter(pk=motion.pk).update(state_entered_at=later)
    assert fresh(motion).available_actions(bob) == ["carry"]
    assert motion.pk in listed(bob)


@pytest.mark.parametrize("backends", ["model backend only", "with django-rules"])
def test_actionable_by_equals_asking_every_motion_on_random_votes(members, settings, backends):
    if backends == "model backend only":
        settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    rng = random.Random(20261201)
    for _ in range(40):
        motion = Motion.objects.create(mover=rng.choice(members), urgent=rng.random() < 0.3)
        for voter in members:
            for name in ("carry", "reject"):
                motion = fresh(motion)
                if rng.random() < 0.3 and name in motion.available_actions(voter):
                    motion.transition(name, actor=voter)
    assert {m.state for m in Motion.objects.all()} >= {"open", "carried"}
    for actor in members:
        assert listed(actor) == asked(actor), actor.username


def test_one_query_when_every_policy_has_a_filter(members, settings, django_assert_num_queries):
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    _, bob, _, _ = members
    voted, other = Motion.objects.create(urgent=True), Motion.objects.create(urgent=True)
    voted.carry(actor=bob)
    bob.has_perm("testapp.change_motion")  # the user's permissions, loaded once and cached
    with django_assert_num_queries(1):
        found = [m.pk for m in Motion.objects.actionable_by(bob)]
    assert found == [other.pk]


def test_the_inbox_leaves_out_a_motion_the_actor_voted_on(members, settings):
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    _, bob, cy, _ = members
    voted, other = Motion.objects.create(urgent=True), Motion.objects.create(urgent=True)
    voted.carry(actor=bob)
    assert [item.record.pk for item in inbox(bob, models=[Motion])] == [other.pk]
    assert {item.record.pk for item in inbox(cy, models=[Motion])} == {voted.pk, other.pk}
