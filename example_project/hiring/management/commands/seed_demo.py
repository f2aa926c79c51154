"""Create the demo admin user and records across the five workflows (idempotent).

Some records are placed at varied ages, so deadlines are pending and some are
already due when the worker starts.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.utils import timezone

from example_project.approvals.models import Document
from example_project.dunning.models import Subscription
from example_project.fulfilment.models import Order
from example_project.hiring.models import Candidate
from example_project.support.models import Ticket

CANDIDATES = [
    ("Ada Lovelace", "python django postgresql testing design"),
    ("Grace Hopper", "sql review design python"),
    ("Linus Example", "c kernels"),
    ("Alan Example", ""),  # screening fails three times: the resume is empty
]


def aged(record, state, days=0, hours=0, **fields):
    """Put ``record`` in ``state`` as if it had entered it that long ago."""
    entered = timezone.now() - timedelta(days=days, hours=hours)
    type(record).objects.filter(pk=record.pk).update(
        state=state, state_entered_at=entered, **fields
    )


class Command(BaseCommand):
    help = "Create the demo admin user (admin / admin) and records in every example workflow."

    def handle(self, *args, **options):
        users = get_user_model()
        if not users.objects.filter(username="admin").exists():
            users.objects.create_superuser("admin", "admin@example.com", "admin")
        if not Candidate.objects.exists():
            self.seed()
        self.stdout.write(
            "Demo data ready. Log in at http://127.0.0.1:8000/admin/ as admin / admin"
        )

    def seed(self):
        now = timezone.now()
        for name, resume in CANDIDATES:
            Candidate.objects.create(name=name, resume=resume)
        offer = Candidate.objects.create(name="Katherine Example", resume="python sql review")
        aged(offer, "offer_sent", days=3)  # reminder due, expiry pending
        interview = Candidate.objects.create(name="Barbara Example", resume="django testing")
        aged(interview, "awaiting_interview", interview_at=now + timedelta(minutes=2))

        Document.objects.create(title="Expense policy")
        reviewing = Document.objects.create(title="Security policy")
        aged(reviewing, "in_review", days=3)  # a reminder is due
        stale = Document.objects.create(title="Old handbook")
        aged(stale, "in_review", days=15)  # expired

        Order.objects.create(item="Kettle").checkout()
        Order.objects.create(item="Desk", fail_next="reserve").checkout()
        aged(Order.objects.create(item="Chair"), "cart", days=4)  # abandoned

        Subscription.objects.create(customer="Acme")
        late = Subscription.objects.create(customer="Globex")
        aged(late, "grace", days=7, grace_ends_at=now - timedelta(hours=2))  # dunning starts
        aged(Subscription.objects.create(customer="Initech"), "dunning", days=4)

        normal = Ticket.objects.create(subject="Printer jammed")
        aged(normal, "technical", days=5)  # warned and breached
        aged(Ticket.objects.create(subject="Site down", priority="urgent"), "urgent", hours=3)
        waiting = Ticket.objects.create(subject="Feature question", team="billing")
        aged(waiting, "waiting_on_customer", days=31)
