"""``release_after`` run by the worker process itself (docs/holding-work.md): a claim held
past its duration is let go by ``manage.py workflow_worker --once``, found through the
record's stored ``next_due_at``, and logged once."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from django_workflow.models import TransitionLog
from tests.processes import run_once
from tests.testapp.models import Errand

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_worker_releases_a_claim_held_too_long_and_keeps_a_fresh_one():
    alice = User.objects.create_user("alice")
    stale = Errand.objects.create(title="stale").start().claim(alice)
    fresh = Errand.objects.create(title="fresh").start().claim(alice)
    Errand.objects.filter(pk=stale.pk).update(assigned_at=timezone.now() - timedelta(days=2))
    assert Errand.objects.get(pk=stale.pk).next_due_at < timezone.now()  # found by the index
    for _ in range(2):
        result = run_once()
        assert result.returncode == 0, result.stderr
    assert Errand.objects.get(pk=stale.pk).assignee is None
    assert Errand.objects.get(pk=fresh.pk).assignee == alice
    rows = TransitionLog.objects.filter(triggered_by="assignment", transition_name="release")
    assert list(rows.values_list("object_id", "actor")) == [(str(stale.pk), None)]
