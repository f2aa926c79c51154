"""Create the demo admin user and a few candidates (idempotent)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

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
        self.stdout.write(
            "Demo data ready. Log in at http://127.0.0.1:8000/admin/ as admin / admin"
        )
