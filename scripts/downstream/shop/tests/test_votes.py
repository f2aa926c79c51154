from django.contrib.auth.models import Permission, User
from django.test import TestCase

from django_workflow import AlreadyVoted, WorkflowPermissionDenied
from shop.models import Document

from .helpers import moves


def reviewer(name):
    user = User.objects.create_user(name)
    user.user_permissions.add(Permission.objects.get(codename="change_document"))
    return User.objects.get(pk=user.pk)  # a fresh instance: no stale permission cache


class VoteTests(TestCase):
    def test_two_different_approvers_approve(self):
        alice, bob = reviewer("alice"), reviewer("bob")
        carol = User.objects.create_user("carol")
        document = Document.objects.create(title="Budget 2027")
        document.submit(actor=alice)

        with self.assertRaises(WorkflowPermissionDenied):
            document.approve(actor=carol)

        document.approve(actor=alice)
        self.assertEqual(document.current_step, "in_review")
        self.assertEqual(document.votes("approve"), [alice])
        self.assertEqual(document.available_actions(alice), ["request_changes"])
        with self.assertRaises(AlreadyVoted):
            document.approve(actor=alice)

        document.approve(actor=bob)
        self.assertEqual(document.current_step, "approved")
        document.refresh_from_db()
        self.assertEqual(document.current_step, "approved")
        self.assertEqual(
            moves(document)[-3:],
            [
                ("in_review", "in_review", "vote", "approve"),
                ("in_review", "in_review", "vote", "approve"),
                ("in_review", "approved", "manual", "approve"),
            ],
        )
        self.assertEqual([row.actor for row in document.history()][-3:], [alice, bob, bob])

    def test_a_step_change_discards_the_votes(self):
        alice, bob = reviewer("alice"), reviewer("bob")
        document = Document.objects.create(title="Budget 2028")
        document.submit(actor=alice)
        document.approve(actor=alice)
        document.request_changes(actor=bob)
        document.submit(actor=alice)
        self.assertEqual(document.votes("approve"), [])
        document.approve(actor=alice)
        self.assertEqual(document.current_step, "in_review")
