"""Seed the demo: an admin user and records in all five example workflows.

Every record gets its past by going through its workflow: the clock travels
back (``time_machine``), the record is created, people call its transitions
as real calls at past instants, and a simulated worker fires each deadline
at its instant and runs each automatic step as records enter it. Nothing
writes a workflow column directly, so the history never contradicts the step.

The simulated worker stops ``WORKER_STOPPED`` before the present, as if the
demo's worker had been down since: the deadlines that fell due since then
are already due when ``workflow_worker`` starts, in every app, on every
``check_interval``. One candidate's booking halted, for the admin's "Retry
now". A few records are created in the present instead, for the worker to
run their automatic steps live (one of them fails three times).

Seeding is idempotent: when any example record exists nothing is seeded
(``make demo-reset`` starts from an empty database).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from django.utils.text import capfirst

from django_workflow.testing import run_due_work
from example_project.approvals.models import Document
from example_project.dunning.models import Subscription
from example_project.fulfilment.models import Order
from example_project.hiring.models import Candidate
from example_project.support.models import Ticket

MODELS = (Candidate, Document, Order, Subscription, Ticket)
#: How long before the present the simulated worker stopped firing.
WORKER_STOPPED = timedelta(hours=2)

MINUTE, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)


@dataclass(order=True)
class Event:
    at: datetime
    order: int
    run: Callable[[], None] = field(compare=False)


class Story:
    """The demo's past, played in order on a travelling clock."""

    def __init__(self, now: datetime, people: dict[str, Any]) -> None:
        self.now = now
        self.stopped = now - WORKER_STOPPED
        self.people = people
        self.events: list[Event] = []

    def record(self, model: Any, ago: timedelta, **fields: Any) -> Script:
        """A record created ``ago`` before the present; its script goes on from there."""
        return Script(self, model, ago, fields)

    def add(self, ago: timedelta, run: Callable[[], None]) -> None:
        at = self.now - ago
        if at > self.stopped:
            raise ValueError(f"the demo's past ends {WORKER_STOPPED} ago: {ago} is too recent")
        self.events.append(Event(at, len(self.events), run))

    def play(self, traveller: Any) -> None:
        for event in sorted(self.events):
            self.fire_until(traveller, event.at)
            traveller.move_to(event.at)
            with transaction.atomic():
                event.run()
            run_due_work()  # the automatic steps the event led into
        self.fire_until(traveller, self.stopped)

    def fire_until(self, traveller: Any, until: datetime) -> None:
        """What a worker would have done: fire each deadline due by ``until`` at its instant."""
        previous = None
        while (due := _next_deadline()) is not None and due <= until:
            if due == previous:
                raise RuntimeError(f"a deadline due at {due} does not fire")
            traveller.move_to(due)
            run_due_work()
            previous = due


def _next_deadline() -> datetime | None:
    """The soonest stored due instant: a step's deadlines and an SLA's warning and
    breach alike, as the worker reads them."""
    instants = [
        record.next_due_at for model in MODELS for record in model.objects.exclude(next_due_at=None)
    ]
    return min(instants, default=None)


class Script:
    """One record's past: created, then transitions called by people at given instants."""

    def __init__(self, story: Story, model: Any, ago: timedelta, fields: dict[str, Any]) -> None:
        self.story, self.model, self.pk = story, model, None
        story.add(ago, lambda: self._create(fields))

    def _create(self, fields: dict[str, Any]) -> None:
        self.pk = self.model.objects.create(**fields).pk

    def then(self, ago: timedelta, name: str, by: str = "admin", **values: Any) -> Script:
        """Call transition ``name`` as ``by``, ``ago`` before the present."""

        def call() -> None:
            record = self.model.objects.get(pk=self.pk)
            getattr(record, name)(actor=self.story.people[by], **values)

        self.story.add(ago, call)
        return self


def the_past(story: Story) -> None:
    """Who did what, and when (``ago``: before the present)."""
    now = story.now

    # Hiring (the precise scheduler): screening and booking run as records enter them.
    grace = {"name": "Grace Hopper", "resume": "sql review design python"}
    hired = story.record(Candidate, 20 * DAY, **grace)
    hired.then(17 * DAY, "make_offer").then(16 * DAY, "accept")
    story.record(Candidate, 12 * DAY, name="Linus Example", resume="c kernels")  # rejected
    offered = story.record(Candidate, 5 * DAY, name="Katherine Example", resume="python sql review")
    offered.then(2 * DAY + 90 * MINUTE, "make_offer")  # its reminder is due 90 minutes ago
    story.record(Candidate, 4 * DAY, name="Margaret Example", resume="python testing design")
    # Booking failed and, with no on_error, halted: the panel's "Retry now" (untick
    # "calendar down" first, or it fails again).
    story.record(
        Candidate, 3 * DAY, name="Edsger Example", resume="python review design", calendar_down=True
    )
    # Booked 2 days (less 5 minutes) ago: the interview is 5 minutes into the demo.
    story.record(
        Candidate, 2 * DAY - 5 * MINUTE, name="Barbara Example", resume="django testing review"
    )

    # Approvals (hourly check_interval): two approvals by two different people (a quorum).
    story.record(Document, DAY, title="Expense policy")  # a draft
    approved = story.record(Document, 10 * DAY, title="Travel policy")
    approved.then(10 * DAY, "submit").then(9 * DAY, "approve")
    approved.then(8 * DAY, "approve", by="alice")
    reviewing = story.record(Document, 3 * DAY, title="Security policy")
    reviewing.then(2 * DAY + HOUR, "submit")  # its 2-day reminder is due an hour ago
    stale = story.record(Document, 15 * DAY, title="Old handbook")
    stale.then(14 * DAY + 30 * MINUTE, "submit")  # reminded 6 times; expired 30 minutes ago
    second = story.record(Document, 4 * DAY, title="Privacy notice")
    second.then(3 * DAY, "submit").then(DAY, "approve", by="alice")  # 1 of 2 approvals

    # Fulfilment: the automatic chain, an error step, abandonment. The orders placed
    # before fraud vetting came (version 2) run on version 1 and skip it.
    before = {"workflow_version": 1}
    story.record(Order, 6 * DAY, item="Kettle", **before).then(6 * DAY, "checkout")  # shipped
    desk = story.record(Order, 2 * DAY + HOUR, item="Desk", fail_next="reserve", **before)
    desk.then(2 * DAY + 45 * MINUTE, "checkout")  # awaiting stock: a supplier chase is due
    story.record(Order, 9 * DAY, item="Stool", **before)  # abandoned 6 days ago
    story.record(Order, DAY, item="Mirror").then(DAY, "checkout")  # vetted, then shipped
    piano = story.record(Order, 5 * HOUR, item="Piano", fail_next="vet")
    piano.then(5 * HOUR, "checkout")  # refused by the fraud vetting
    story.record(Order, 3 * DAY + 20 * MINUTE, item="Chair")  # to be abandoned: due 20 min ago
    unpaid = story.record(Order, 4 * DAY, item="Sofa", fail_next="charge")
    unpaid.then(4 * DAY, "checkout").then(3 * DAY, "cancel")

    # Dunning (hourly check_interval): grace on a date of the record, then escalation.
    story.record(Subscription, 60 * DAY, customer="Acme")  # active
    late = story.record(Subscription, 40 * DAY, customer="Globex")
    late.then(7 * DAY, "payment_failed", grace_ends_at=now - 90 * MINUTE)  # dunning is due
    dunned = story.record(Subscription, 40 * DAY, customer="Initech")
    # Dunning since 3 days and an hour ago: its first email is due an hour ago.
    dunned.then(10 * DAY, "payment_failed", grace_ends_at=now - 3 * DAY - 2 * HOUR)
    gone = story.record(Subscription, 90 * DAY, customer="Umbrella")
    gone.then(45 * DAY, "payment_failed", grace_ends_at=now - 44 * DAY)  # cancelled since
    paid = story.record(Subscription, 30 * DAY, customer="Hooli")
    paid.then(5 * DAY, "payment_failed", grace_ends_at=now - 2 * DAY).then(4 * DAY, "pay")

    # Support (Croatian business hours): routing, the resolution SLA and its breach.
    # Three working days without an answer: escalated to urgent, then four hours late.
    story.record(Ticket, 8 * DAY, subject="Printer jammed").then(8 * DAY, "triage")  # breached
    urgent = story.record(Ticket, 2 * HOUR + 25 * MINUTE, subject="Site down")
    urgent.then(2 * HOUR + 20 * MINUTE, "triage", priority="urgent")  # warning due 20 min ago
    waiting = story.record(Ticket, 31 * DAY, subject="Feature question", team="billing")
    waiting.then(31 * DAY, "triage").then(30 * DAY + 10 * MINUTE, "ask_customer")
    solved = story.record(Ticket, 3 * DAY, subject="Password reset")
    solved.then(3 * DAY, "triage").then(3 * DAY - 2 * HOUR, "resolve")
    # Escalated to management, a claim step: the agent's queue offers to claim it.
    outage = story.record(Ticket, 3 * HOUR, subject="Mail server down")
    outage.then(3 * HOUR, "triage", priority="urgent").then(2 * HOUR + 30 * MINUTE, "escalate")


def the_present() -> None:
    """Records created now: the worker runs their automatic steps as soon as it starts."""
    Candidate.objects.create(name="Ada Lovelace", resume="python django postgresql testing")
    Candidate.objects.create(name="Alan Example", resume="")  # screening fails three times
    Order.objects.create(item="Lamp").checkout()
    Ticket.objects.create(subject="New laptop")


@contextlib.contextmanager
def quiet(*names: str):
    """Loggers at ERROR meanwhile: the failures the past replays are in its transition log,
    and django-q2's "Enqueued" lines say nothing the summary does not."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def agent_user() -> Any:
    """The support agent (agent / agent): not staff, in the "Support agents" group, which
    may view and change tickets; the tickets' policies decide the rest."""
    from django.contrib.auth.models import Group, Permission

    agents, _ = Group.objects.get_or_create(name="Support agents")
    codenames = ("view_ticket", "change_ticket")
    agents.permissions.add(
        *Permission.objects.filter(content_type__app_label="support", codename__in=codenames)
    )
    users = get_user_model()
    agent = users.objects.filter(username="agent").first()
    if agent is None:
        agent = users.objects.create_user("agent", "agent@example.com", "agent")
    agent.groups.add(agents)
    return agent


class Command(BaseCommand):
    help = (
        "Create the demo users (admin / admin, agent / agent) and records in every example "
        "workflow, their past played through the workflow; nothing when example records exist."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--address",
            default=os.environ.get("DEMO_ADDRESS") or "127.0.0.1:8000",
            help="host:port the web server listens on, for the login URL (default: "
            "DEMO_ADDRESS, or 127.0.0.1:8000).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        people = self.people()
        existing = {m._meta.label: m.objects.count() for m in MODELS}
        if any(existing.values()):
            counts = ", ".join(f"{count} {label}" for label, count in existing.items())
            self.stdout.write(
                f"Demo data already present ({counts}): nothing seeded. "
                "`make demo-reset` deletes the database and seeds it afresh."
            )
        else:
            self.seed(people)
        self.stdout.write(
            f"A support agent's queue, outside the admin: http://{options['address']}/agent/ "
            "as agent / agent"
        )
        self.stdout.write(f"Log in at http://{options['address']}/admin/ as admin / admin")

    def people(self) -> dict[str, Any]:
        users = get_user_model()
        admin = users.objects.filter(username="admin").first()
        if admin is None:
            admin = users.objects.create_superuser("admin", "admin@example.com", "admin")
        alice, created = users.objects.get_or_create(
            username="alice", defaults={"first_name": "Alice", "is_staff": True}
        )
        if created:
            alice.set_unusable_password()
            alice.save()
        agent_user()
        return {"admin": admin, "alice": alice}

    def seed(self, people: dict[str, Any]) -> None:
        import time_machine

        story = Story(timezone.now(), people)
        the_past(story)
        first = min(story.events).at
        with quiet("django_workflow", "django-q"):
            with (
                override_settings(DJANGO_WORKFLOW={"ENQUEUE_AUTOMATIC_STEPS": False}),
                time_machine.travel(first, tick=False) as traveller,
            ):
                story.play(traveller)
            the_present()
        self.report()

    def report(self) -> None:
        """Records per step and the deadlines already due, in the labels the admin shows."""
        now = timezone.now()
        due = []
        for model in MODELS:
            steps: dict[str, int] = {}
            for record in model.objects.order_by("pk"):
                step = str(model.workflow.step_label(record.current_step))
                steps[step] = steps.get(step, 0) + 1
                due += [
                    f"  {capfirst(model._meta.verbose_name)} {record} ({step}): {d.label}, "
                    f"due {_ago(now - d.due_at)}"
                    for d in record.pending_deadlines()
                    if d.due_at <= now
                ]
            listed = ", ".join(f"{count} {step}" for step, count in steps.items())
            self.stdout.write(f"{capfirst(model._meta.verbose_name_plural)}: {listed}")
        self.stdout.write(f"Already due, for the worker to fire as it starts ({len(due)}):")
        for line in due:
            self.stdout.write(line)
        self.stdout.write(
            "Expected: the worker logs a WARNING for each of Alan Example's screening attempts "
            "(his resume is empty, on purpose); after the third he moves to Screening failed."
        )


def _ago(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60} min ago" if minutes >= 60 else f"{minutes} min ago"
