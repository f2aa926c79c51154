from datetime import timedelta

import time_machine
from django.contrib.auth.models import User
from django.test import TestCase

from django_workflow import AlreadyClaimed, WorkflowPermissionDenied
from django_workflow.testing import advance_to_next_deadline
from shop.models import Ticket

from .helpers import T0, moves, rows


class ClaimTests(TestCase):
    def test_only_the_holder_resolves_an_escalated_ticket(self):
        mia = User.objects.create_user("mia")
        sam = User.objects.create_user("sam")
        ticket = Ticket.objects.create(subject="Printer on fire")
        ticket.escalate(actor=sam)
        self.assertEqual(ticket.current_step, "management")
        self.assertIsNone(ticket.assignee)

        with self.assertRaises(WorkflowPermissionDenied):
            ticket.resolve(actor=mia)  # nobody holds it: claim it first

        ticket.claim(mia)
        ticket.refresh_from_db()
        self.assertEqual(ticket.assignee, mia)
        with self.assertRaises(AlreadyClaimed) as raised:
            ticket.claim(sam)
        self.assertEqual(raised.exception.holder, mia)
        with self.assertRaises(WorkflowPermissionDenied):
            ticket.resolve(actor=sam)
        self.assertEqual(ticket.available_actions(sam), [])
        self.assertEqual(ticket.available_actions(mia), ["resolve"])

        ticket.resolve(actor=mia)
        ticket.refresh_from_db()
        self.assertEqual(ticket.current_step, "resolved")
        self.assertIsNone(ticket.assignee)
        [claim] = rows(ticket, "assignment")
        self.assertEqual(claim.transition_name, "claim")
        self.assertEqual(claim.data, {"assignee": mia.pk, "assignee_name": "mia"})


class SlaTests(TestCase):
    def test_the_clock_pauses_warns_and_breaches(self):
        with time_machine.travel(T0, tick=False) as clock:
            ticket = Ticket.objects.create(subject="Cannot log in")
            sla = ticket.sla("resolution")
            self.assertEqual(sla.state, "running")
            self.assertEqual(sla.remaining, timedelta(hours=4))
            self.assertEqual(sla.due_at, T0 + timedelta(hours=4))

            clock.move_to(T0 + timedelta(hours=1))
            ticket.take()
            clock.move_to(T0 + timedelta(hours=1, minutes=30))
            ticket.ask()
            sla = ticket.sla("resolution")
            self.assertEqual(
                (sla.state, sla.consumed, sla.due_at), ("paused", timedelta(hours=1.5), None)
            )
            self.assertEqual(ticket.pending_deadlines(), [])

            # A day with the customer: the clock stands still.
            back = T0 + timedelta(days=1)
            clock.move_to(back)
            ticket.reply()
            sla = ticket.sla("resolution")
            self.assertEqual((sla.state, sla.remaining), ("running", timedelta(hours=2.5)))
            [alarm] = ticket.pending_deadlines()
            self.assertEqual(
                (alarm.kind, alarm.name, alarm.due_at),
                ("sla", "resolution.warn", back + timedelta(minutes=30)),
            )

            self.assertEqual(advance_to_next_deadline(ticket), back + timedelta(minutes=30))
            self.assertEqual(ticket.lead_warnings, 1)
            self.assertEqual(ticket.current_step, "working")
            self.assertEqual(advance_to_next_deadline(ticket), back + timedelta(hours=2.5))
            self.assertEqual(ticket.current_step, "management")
            breach = moves(ticket)[-1]
            self.assertEqual(breach[:3], ("working", "management", "timeout"))
            self.assertEqual(ticket.history().last().data, {"sla": "resolution", "alarm": "breach"})

            mia = User.objects.create_user("mia")
            ticket.claim(mia)
            ticket.resolve(actor=mia)
            sla = ticket.sla("resolution")
            self.assertEqual(sla.state, "breached")
            self.assertEqual(sla.remaining, timedelta(0))
            self.assertGreaterEqual(sla.consumed, timedelta(hours=4))
            self.assertEqual(ticket.lead_warnings, 1)
