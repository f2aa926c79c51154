from datetime import timedelta

import time_machine
from django.test import TestCase

from django_workflow import TransitionNotAllowed
from django_workflow.testing import advance_to_next_deadline, run_due_work
from shop.models import Proposal

from .helpers import T0, moves, rows


class DeadlineTests(TestCase):
    def test_a_reminder_a_nag_twice_then_the_expiry(self):
        with time_machine.travel(T0, tick=False) as clock:
            proposal = Proposal.objects.create(title="New roof")
            proposal.submit()
            self.assertEqual(
                [(d.name, d.kind, d.due_at) for d in proposal.pending_deadlines()],
                [
                    ("reminder", "action", T0 + timedelta(hours=2)),
                    ("nag", "every", T0 + timedelta(days=1)),
                    ("expiry", "transition", T0 + timedelta(days=5)),
                ],
            )

            # Nothing is due yet.
            clock.move_to(T0 + timedelta(hours=1))
            self.assertEqual(run_due_work(), {})

            self.assertEqual(advance_to_next_deadline(proposal), T0 + timedelta(hours=2))
            self.assertEqual((proposal.reminders, proposal.nags), (1, 0))
            self.assertEqual(advance_to_next_deadline(proposal), T0 + timedelta(days=1))
            self.assertEqual((proposal.reminders, proposal.nags), (1, 1))
            self.assertEqual(advance_to_next_deadline(proposal), T0 + timedelta(days=2))
            self.assertEqual((proposal.reminders, proposal.nags), (1, 2))
            # times=2: the nag is spent; the expiry is what is left.
            self.assertEqual([d.name for d in proposal.pending_deadlines()], ["expiry"])
            self.assertEqual(advance_to_next_deadline(proposal), T0 + timedelta(days=5))
            self.assertEqual(proposal.current_step, "expired")
            self.assertEqual(proposal.pending_deadlines(), [])
            self.assertEqual(
                [(r.to_state, r.transition_name) for r in rows(proposal, "timeout")],
                [
                    ("review", "reminder"),
                    ("review", "nag"),
                    ("review", "nag"),
                    ("expired", "expiry"),
                ],
            )
            # Once per round: nothing fires again.
            clock.move_to(T0 + timedelta(days=9))
            self.assertEqual(run_due_work(), {})

    def test_retract_is_a_transition_like_any_other(self):
        with time_machine.travel(T0, tick=False) as clock:
            proposal = Proposal.objects.create(title="New roof")
            proposal.submit()
            advance_to_next_deadline(proposal)
            self.assertEqual(proposal.reminders, 1)

            proposal.retract()
            self.assertEqual(proposal.current_step, "draft")
            self.assertEqual(moves(proposal)[-1], ("review", "draft", "manual", "retract"))
            self.assertEqual(proposal.pending_deadlines(), [])
            with self.assertRaises(TransitionNotAllowed):
                proposal.retract()

            # A new round in review: the reminder fires again.
            clock.move_to(T0 + timedelta(hours=3))
            proposal.submit()
            self.assertEqual(advance_to_next_deadline(proposal), T0 + timedelta(hours=5))
            self.assertEqual(proposal.reminders, 2)
