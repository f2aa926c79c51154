"""The ``has_perm`` policy and object permissions, with django-rules installed as an
authentication backend beside Django's ``ModelBackend`` (docs/policies.md)."""

import pytest
import rules
from django.contrib.auth.models import Permission, User

from django_workflow import WorkflowPermissionDenied
from django_workflow.policies import has_perm
from tests.testapp.models import Ticket

pytestmark = pytest.mark.django_db

PERMISSION = "testapp.change_ticket"  # the policy of Ticket's "new" and "working" steps


@rules.predicate
def owns_ticket(user, ticket):
    return ticket is not None and ticket.owner_id == user.pk


@pytest.fixture
def owners_may_change_their_tickets():
    """A django-rules grant: ``testapp.change_ticket`` on the tickets a user owns."""
    rules.add_perm(PERMISSION, rules.is_active & owns_ticket)
    yield
    rules.remove_perm(PERMISSION)


@pytest.fixture
def ada():
    return User.objects.create_user("ada")


def stored_state(ticket):
    return Ticket.objects.get(pk=ticket.pk).state


def test_an_object_grant_allows_that_record_and_not_another(owners_may_change_their_tickets, ada):
    hers = Ticket.objects.create(owner=ada)
    theirs = Ticket.objects.create(owner=User.objects.create_user("grace"))
    assert not ada.has_perm(PERMISSION)  # no global permission: only the grant on her ticket

    hers.start(actor=ada)
    assert (hers.state, stored_state(hers)) == ("working", "working")
    with pytest.raises(WorkflowPermissionDenied):
        theirs.start(actor=ada)
    assert (theirs.state, stored_state(theirs)) == ("new", "new")


def test_available_actions_honour_the_object_grant(owners_may_change_their_tickets, ada):
    hers = Ticket.objects.create(owner=ada)
    theirs = Ticket.objects.create(owner=User.objects.create_user("grace"))
    assert hers.available_actions(ada) == ["close", "start"]
    assert theirs.available_actions(ada) == []


def test_without_the_grant_the_owner_is_refused(ada):
    hers = Ticket.objects.create(owner=ada)
    assert hers.available_actions(ada) == []
    with pytest.raises(WorkflowPermissionDenied):
        hers.start(actor=ada)


def test_the_backend_decides_who_the_grant_covers(owners_may_change_their_tickets, ada):
    """django-rules asks no ``is_active`` of its own; the rule above does."""
    hers = Ticket.objects.create(owner=ada)
    ada.is_active = False
    ada.save()
    assert hers.available_actions(User.objects.get(pk=ada.pk)) == []


def test_a_global_permission_still_allows_every_record(owners_may_change_their_tickets, ada):
    """``ModelBackend`` answers ``False`` to every object check: the global one comes first."""
    boss = User.objects.create_user("boss")
    boss.user_permissions.add(
        Permission.objects.get(codename="change_ticket", content_type__app_label="testapp")
    )
    boss = User.objects.get(pk=boss.pk)
    assert not boss.has_perm(PERMISSION, Ticket.objects.create())  # ModelBackend: no object perms
    hers = Ticket.objects.create(owner=ada)
    unowned = Ticket.objects.create()
    assert (hers.available_actions(boss), unowned.available_actions(boss)) == 2 * (
        ["close", "start"],
    )
    hers.start(actor=boss)
    unowned.close(actor=boss)
    assert (stored_state(hers), stored_state(unowned)) == ("working", "closed")


def test_a_superuser_is_allowed_everywhere(owners_may_change_their_tickets):
    root = User.objects.create_superuser("root")
    ticket = Ticket.objects.create(owner=User.objects.create_user("grace"))
    assert ticket.available_actions(root) == ["close", "start"]


class Asking:
    """An actor that notes each ``has_perm`` question and grants what it is told to."""

    def __init__(self, *, globally=False, on=None):
        self.globally, self.on, self.asked = globally, on, []

    def has_perm(self, perm, obj=None):
        self.asked.append((perm, obj))
        return self.globally if obj is None else obj is self.on


def test_the_global_question_comes_first_then_the_one_about_the_record():
    record = object()
    policy = has_perm("app.do")

    global_grant = Asking(globally=True)
    assert policy(global_grant, record, "x")
    assert global_grant.asked == [("app.do", None)]  # allowed: the record is not asked about

    object_grant = Asking(on=record)
    assert policy(object_grant, record, "x")
    assert object_grant.asked == [("app.do", None), ("app.do", record)]

    assert not policy(Asking(on=record), object(), "x")
    assert not policy(None, record, "x")


def test_without_a_record_only_the_global_question_is_asked():
    actor = Asking()
    assert not has_perm("app.do")(actor, None, "x")
    assert actor.asked == [("app.do", None)]
