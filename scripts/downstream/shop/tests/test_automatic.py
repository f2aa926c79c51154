from datetime import timedelta

import time_machine
from django.test import TestCase

from django_workflow.testing import run_due_work
from shop.models import Application

from .helpers import T0, moves, rows


class AutomaticStepTests(TestCase):
    def test_a_chain_of_automatic_steps_runs_when_the_record_is_created(self):
        with self.captureOnCommitCallbacks(execute=True):
            application = Application.objects.create(applicant="Ada Lovelace")
        application.refresh_from_db()
        self.assertEqual(application.current_step, "interview")
        self.assertEqual(application.score, 12)
        self.assertEqual(
            moves(application),
            [
                ("", "screening", "initial", ""),
                ("screening", "scoring", "automatic", "screen"),
                ("scoring", "ranking", "automatic", "compute_score"),
                ("ranking", "interview", "automatic", "rank"),
                ("interview", "interview", "timeout", "on_enter"),
            ],
        )
        # on_enter ran once for the entry into interview.
        self.assertEqual(application.panel_notified, 1)

    def test_a_route_sends_a_low_score_elsewhere(self):
        with self.captureOnCommitCallbacks(execute=True):
            application = Application.objects.create(applicant="Bo")
        application.refresh_from_db()
        self.assertEqual(application.current_step, "rejected")
        self.assertEqual(application.score, 2)
        self.assertEqual(application.panel_notified, 0)
        self.assertEqual(application.available_actions(), [])

    def test_a_failed_action_is_retried_after_its_backoff(self):
        with time_machine.travel(T0, tick=False) as clock:
            with self.captureOnCommitCallbacks(execute=True):
                application = Application.objects.create(
                    applicant="Grace Hopper", service_back_at=T0 + timedelta(seconds=45)
                )
            application.refresh_from_db()
            self.assertEqual(application.current_step, "screening")
            [failure] = rows(application, "failed")
            self.assertEqual(failure.attempt, 1)
            self.assertIn("the screening service is down", failure.error)

            # Before the backoff has passed nothing runs again.
            clock.move_to(T0 + timedelta(seconds=20))
            with self.captureOnCommitCallbacks(execute=True):
                run_due_work()
            application.refresh_from_db()
            self.assertEqual(application.current_step, "screening")

            clock.move_to(T0 + timedelta(minutes=2))
            with self.captureOnCommitCallbacks(execute=True):
                fired = run_due_work()
            self.assertIn("shop.Application:step:screening", fired)
            application.refresh_from_db()
            self.assertEqual(application.current_step, "interview")
            self.assertEqual(len(rows(application, "failed")), 1)
            self.assertEqual(
                [m for m in moves(application) if m[2] == "automatic"],
                [
                    ("screening", "scoring", "automatic", "screen"),
                    ("scoring", "ranking", "automatic", "compute_score"),
                    ("ranking", "interview", "automatic", "rank"),
                ],
            )
            self.assertEqual(application.panel_notified, 1)

    def test_when_the_attempts_run_out_the_record_takes_on_error(self):
        with time_machine.travel(T0, tick=False) as clock:
            with self.captureOnCommitCallbacks(execute=True):
                application = Application.objects.create(
                    applicant="Never", service_back_at=T0 + timedelta(days=30)
                )
            for minutes in (2, 4, 6):
                clock.move_to(T0 + timedelta(minutes=minutes))
                with self.captureOnCommitCallbacks(execute=True):
                    run_due_work()
            application.refresh_from_db()
            self.assertEqual(application.current_step, "failed")
            self.assertEqual([row.attempt for row in rows(application, "failed")], [1, 2])
            [error_path] = rows(application, "error_path")
            self.assertEqual((error_path.from_state, error_path.to_state), ("screening", "failed"))
            self.assertIn("the screening service is down", error_path.error)
