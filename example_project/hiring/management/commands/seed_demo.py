"""Create the demo admin user and a few candidates (idempotent)."""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.utils import timezone

from example_project.hiring.models import Candidate

CANDIDATES = [
    ("Ada Lovelace", "python django postgresql testing design"),
    ("Grace Hopper", "sql review design python"),
    ("Linus Example", "c kernels"),
    ("Margaret Hamilton", "testing review design sql python django"),
    ("Alan Example", ""),  # screening fails: the resume is empty
]


class Command(BaseCommand):
    help = "Create the demo admin user (admin / admin) and sample candidates."

    def handle(self, *args, **options):
        users = get_user_model()
        if not users.objects.filter(username="admin").exists():
            users.objects.create_superuser("admin", "admin@example.com", "admin")
        if not Candidate.objects.exists():
            for name, resume in CANDIDATES:
                Candidate.objects.create(name=name, resume=resume)
            # One offer sent three days ago: its reminder is due, its expiry pending.
            waiting = Candidate.objects.create(name="Katherine Example", resume="python sql review")
            Candidate.objects.filter(pk=waiting.pk).update(
                state="offer_sent", state_entered_at=timezone.now() - timedelta(days=3)
            )
        self.stdout.write(
            "Demo data ready. Log in at http://127.0.0.1:8000/admin/ as admin / admin"
        )
