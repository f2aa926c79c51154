"""``manage.py upgrade_seed SNAPSHOT``: on the release upgraded from, put records in every
interesting state, the clock moved by time_machine from T0 to NOW, then write the JSON
snapshot. Nothing runs after NOW: what is due then is left for the upgraded worker."""

import json
from datetime import timedelta
from pathlib import Path

import time_machine
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from django_workflow import deliver, run_work
from django_workflow.engine import run_step
from scratch.models import Article, Case, Digest, Document, Job, Parcel, Payment, Reminder, Ticket
from scratch.state import NOW, T0, snapshot, summary


class Command(BaseCommand):
    help = "Fill the scratch project on the old release and snapshot it."
    requires_system_checks = []  # the old release refuses the `retract` transition (E017)

    def add_arguments(self, parser):
        parser.add_argument("snapshot")

    def handle(self, *args, **options):
        with time_machine.travel(T0, tick=False) as clock:
            self.seed(lambda delta: clock.move_to(T0 + delta))
            clock.move_to(NOW)
            state = snapshot()
        Path(options["snapshot"]).write_text(json.dumps(state, indent=1, sort_keys=True))
        self.stdout.write(f"state at {NOW.isoformat()} (the upgrade's now):")
        self.stdout.write(summary(state))

    def seed(self, at):
        users = {
            name: get_user_model().objects.create_user(name) for name in ("alice", "bob", "mia")
        }
        # T0: records whose due instants fall before NOW, and the ones acted on below.
        Reminder.objects.create(name="early")  # nudge due at T0+1h: before NOW, not fired
        case = Case.objects.create(title="sla")
        halted = Job.objects.create(name="halted", fail_until=T0 + timedelta(days=30))
        Parcel.objects.create(name="effect-ran")  # its on_enter runs at T0+1m
        review = Document.objects.create(title="one-vote")
        withdrawn = Document.objects.create(title="to-withdraw")
        Payment.objects.create(psp_ref="pay_1")
        retracted = Article.objects.create(title="retracted-before")
        Article.objects.create(title="retract-after")
        ticket = Ticket.objects.create(subject="held")

        at(timedelta(minutes=1))
        self.expect(run_work(Parcel, "enter:packing"), 1, "the on_enter of 'effect-ran' ran")
        self.expect(run_step(Job, halted.pk, "running"), None, "job 'halted' failed, attempt 1")

        at(timedelta(minutes=2))
        Parcel.objects.create(name="effect-owed")  # its print_label is owed, never run
        moved_on = Parcel.objects.create(name="moved-on")

        at(timedelta(minutes=10))
        Digest.objects.create(name="mid-series")  # ticks at +1h10, +2h10, then NOW+10m
        moved_on.ship()  # owes print_label for packing and notify for shipped

        at(timedelta(minutes=16))
        self.expect(run_step(Job, halted.pk, "running"), None, "job 'halted' failed, attempt 2")

        at(timedelta(minutes=30))
        case.start()  # the clock has run 30 minutes in `new`, runs on in `working`
        self.expect(run_step(Job, halted.pk, "running"), None, "job 'halted' halted, attempt 3")

        at(timedelta(hours=1))
        case.refresh_from_db()
        case.ask()  # paused at 1 h consumed
        review.approve(actor=users["alice"])  # one vote of two
        withdrawn.approve(actor=users["alice"])
        # The old release's `retract` is WorkflowModel.retract (votes): call the transition.
        retracted.transition("retract")
        ticket.claim(users["mia"])  # release_after 1d: due at NOW+22h

        at(timedelta(hours=1, minutes=10))
        self.expect(run_work(Digest, "every:active.tick"), 1, "the digest ticked once")

        at(timedelta(hours=2))
        case.refresh_from_db()
        case.reply()  # runs again: 2 h consumed at NOW

        at(timedelta(hours=2, minutes=10))
        self.expect(run_work(Digest, "every:active.tick"), 1, "the digest ticked twice")

        at(timedelta(hours=2, minutes=30))
        Reminder.objects.create(name="late")  # nudge due at NOW+30m

        at(timedelta(hours=2, minutes=50))
        delivery = deliver(
            "psp.settled", "pay_1", id="evt_settle", data={"settled_amount": 1200}, seq=2
        )
        self.expect(delivery.outcome, "buffered", "the settlement came first and waits")

        at(timedelta(hours=2, minutes=55))
        flaky = Job.objects.create(name="flaky", fail_until=NOW)
        at(timedelta(hours=2, minutes=56))
        # Attempt 1 of 3 fails; the retry is due at NOW+6m, after the upgrade.
        self.expect(run_step(Job, flaky.pk, "running"), None, "job 'flaky' failed, attempt 1")

    def expect(self, actual, expected, what):
        if actual != expected:
            raise CommandError(f"seeding: expected {what} ({expected!r}), got {actual!r}")
        self.stdout.write(f"  {what}")
