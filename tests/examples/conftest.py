from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission, User

from django_workflow.testing import run_due_work

T = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)  # a Monday


class Clock:
    """Moves the time-machine clock and runs what is due, as the worker would."""

    def __init__(self, traveller):
        self.traveller = traveller
        self.now = T
        traveller.move_to(T, tick=False)

    def at(self, instant):
        self.now = instant
        self.traveller.move_to(instant, tick=False)
        return run_due_work()

    def after(self, delta):
        return self.at(self.now + delta)


@pytest.fixture
def clock(time_machine, db):
    return Clock(time_machine)


@pytest.fixture
def user_with(db):
    def make(name, *codenames):
        user = User.objects.create_user(name)
        user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
        return User.objects.get(pk=user.pk)

    return make
