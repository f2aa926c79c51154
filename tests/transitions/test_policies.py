"""The shipped policies: docs/policies.md."""

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Permission, User

from django_workflow.policies import (
    actor_attribute_equals,
    all_of,
    any_of,
    has_perm,
    is_staff,
    relates_to_actor_via,
)

recruiter = SimpleNamespace(role="recruiter", is_staff=True, is_active=True)
intern = SimpleNamespace(role="intern", is_staff=False)


def test_actor_attribute_equals():
    policy = actor_attribute_equals("role", "recruiter")
    assert policy(recruiter, None, "approve")
    assert not policy(intern, None, "approve")
    assert not policy(None, None, "approve")


def test_equal_declarations_compare_equal():
    assert actor_attribute_equals("role", "x") == actor_attribute_equals("role", "x")
    assert has_perm("a.b") != has_perm("a.c")


def test_is_staff_needs_an_active_staff_actor():
    assert is_staff(recruiter, None, "x")
    assert not is_staff(intern, None, "x")
    assert not is_staff(SimpleNamespace(is_staff=True, is_active=False), None, "x")
    assert not is_staff(None, None, "x")


def test_any_of_and_all_of_combine():
    role = actor_attribute_equals("role", "recruiter")
    assert any_of(role, is_staff)(SimpleNamespace(role="recruiter", is_staff=False), None, "x")
    assert not all_of(role, is_staff)(SimpleNamespace(role="recruiter", is_staff=False), None, "x")
    assert all_of(role, is_staff)(recruiter, None, "x")
    assert not any_of()(recruiter, None, "x")


@pytest.mark.django_db
def test_has_perm_asks_the_user():
    user = User.objects.create_user("u")
    policy = has_perm("auth.change_user")
    assert not policy(user, None, "x")
    user.user_permissions.add(Permission.objects.get(codename="change_user"))
    assert policy(User.objects.get(pk=user.pk), None, "x")
    assert not policy(None, None, "x")


@pytest.mark.django_db
def test_relates_to_actor_via_follows_relations():
    owner = User.objects.create_user("owner")
    record = SimpleNamespace(ticket=SimpleNamespace(owner=owner))
    policy = relates_to_actor_via("ticket__owner")
    assert policy(owner, record, "x")
    assert not policy(User.objects.create_user("other"), record, "x")
    assert not policy(owner, SimpleNamespace(ticket=None), "x")


@pytest.mark.django_db
def test_relates_to_actor_via_a_to_many_relation():
    member = User.objects.create_user("member")
    group = member.groups.create(name="reviewers")
    policy = relates_to_actor_via("user_set")
    assert policy(member, group, "x")
    assert not policy(User.objects.create_user("outsider"), group, "x")
