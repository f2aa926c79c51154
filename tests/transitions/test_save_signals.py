"""Every step change sends Django's pre_save/post_save with the written columns
(docs/log-and-signals.md, "Save signals"), so save-based apps see it."""

from datetime import timedelta

import pytest
from django.db.models.signals import post_save, pre_save

from django_workflow.engine import run_step
from django_workflow.models import WorkAttempt
from django_workflow.testing import run_due_work
from tests.moments import T
from tests.testapp.models import Batch, Decision, Permit, Quiet, Sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def saves():
    """(signal, model, step the instance holds, step in the database, update_fields)."""
    seen = []

    def receiver(signal, sender, instance, update_fields=None, **kwargs):
        if getattr(sender, "workflow", None) is None:
            return  # the log's rows, attempts, history tables
        stored = sender._base_manager.filter(pk=instance.pk).values_list("state", flat=True)
        seen.append((signal, sender, instance.state, stored.first(), update_fields))

    for signal in (pre_save, post_save):
        signal.connect(receiver, dispatch_uid=f"test-{id(signal)}")
    yield seen
    for signal in (pre_save, post_save):
        signal.disconnect(dispatch_uid=f"test-{id(signal)}")


def test_a_manual_transition_sends_both_with_the_written_columns(saves):
    decision = Decision.objects.create(note="x")
    saves.clear()
    decision.approve(note="fine")
    [before, after, *_later] = [s for s in saves if s[1] is Decision]
    assert before[:4] == (pre_save, Decision, "checking", "pending")  # not written yet
    assert after[:4] == (post_save, Decision, "checking", "checking")
    assert before[4] == after[4] == {"state", "state_entered_at", "note"}


def test_batch_timeouts_and_automatic_steps_send_them_per_record(saves, clock):
    Batch.objects.bulk_create([Batch(), Batch()])
    sync = Sync.objects.create()
    saves.clear()
    run_step(Sync, sync.pk, "pushing")
    clock.move_to(T + timedelta(days=2, minutes=1))
    run_due_work()
    moved = [s for s in saves if s[0] is post_save and s[1] is Batch and s[2] == "expired"]
    assert len(moved) == 2 and all("state" in s[4] for s in moved)
    assert {s[4] and "next_due_at" in s[4] for s in moved} == {True}
    pushed = [s for s in saves if s[0] is post_save and s[1] is Sync and s[2] == "pushed"]
    assert len(pushed) == 1
    assert not WorkAttempt.objects.filter(object_id=str(sync.pk)).exists()  # forgotten too


def test_save_signals_false_sends_none_for_step_changes(saves):
    quiet = Quiet.objects.create()
    saves.clear()
    quiet.submit()
    assert [s for s in saves if s[1] is Quiet] == []
    assert Quiet.objects.get(pk=quiet.pk).state == "done"


def test_django_simple_history_keeps_a_row_per_step_change_with_the_step_entered(clock):
    permit = Permit.objects.create()
    permit.submit()
    clock.move_to(T + timedelta(days=1, minutes=1))
    run_due_work()  # the worker's path: the expiry timeout moves it
    permit.refresh_from_db()
    permit.revive()
    permit.approve(note="ok")
    rows = list(permit.audit.order_by("history_date", "history_id"))
    assert [row.state for row in rows] == ["draft", "review", "expired", "review", "approved"]
    assert [row.history_type for row in rows] == ["+", "~", "~", "~", "~"]
    assert rows[-1].note == "ok"
