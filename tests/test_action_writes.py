"""What a step change writes, and what it tells save-based apps (docs/transitions.md,
"Code in a transition"; docs/log-and-signals.md, "Save signals")."""

from datetime import timedelta

import pytest
from django.db.models.signals import post_save, pre_save

from django_workflow.engine import run_step
from django_workflow.errors import StaleRecord
from django_workflow.testing import run_due_work
from tests.moments import T
from tests.testapp.models import Clearance, Hush

pytestmark = pytest.mark.django_db


@pytest.fixture
def saves():
    """Every save signal a workflow model sends: (signal, model, update_fields, instance
    values as the receiver saw them)."""
    seen = []

    def receiver(signal, sender, instance, update_fields=None, **kwargs):
        if getattr(sender, "workflow", None) is not None:
            values = {"state": instance.state, "holder": instance.__dict__.get("holder")}
            seen.append((signal, sender, update_fields, values))

    for signal in (pre_save, post_save):
        signal.connect(receiver, dispatch_uid=f"action-writes-{id(signal)}")
    yield seen
    for signal in (pre_save, post_save):
        signal.disconnect(dispatch_uid=f"action-writes-{id(signal)}")


def test_an_action_may_change_what_its_when_and_routes_read():
    clearance = Clearance.objects.create(amount=150)
    clearance.inspect()  # when=Q(checked=False); the action sets checked=True
    clearance.refresh_from_db()
    assert (clearance.state, clearance.checked) == ("large", True)


def test_an_action_still_sees_a_stale_instance_refused():
    clearance = Clearance.objects.create(amount=150)
    Clearance.objects.filter(pk=clearance.pk).update(checked=True)
    with pytest.raises(StaleRecord):
        clearance.inspect()
    assert Clearance.objects.get(pk=clearance.pk).state == "draft"


def test_a_transition_action_sends_one_pair_naming_what_the_action_wrote(saves):
    clearance = Clearance.objects.create()
    saves.clear()
    clearance.inspect()
    assert [s[0] for s in saves] == [pre_save, post_save]
    assert {"checked", "state", "state_entered_at"} <= saves[1][2] == saves[0][2]


def test_an_automatic_step_sends_one_pair_naming_what_the_action_wrote(saves):
    clearance = Clearance.objects.create()
    clearance.verify()
    saves.clear()
    assert run_step(Clearance, clearance.pk, "verifying") == "small"
    assert [s[0] for s in saves] == [pre_save, post_save]
    assert {"checked", "state", "state_entered_at"} <= saves[1][2]


def test_an_action_timeout_sends_one_pair_naming_what_it_wrote(saves, clock):
    Clearance.objects.create()
    saves.clear()
    clock.move_to(T + timedelta(days=1, minutes=1))
    run_due_work()
    assert [s[0] for s in saves] == [pre_save, post_save]
    assert {"ticks", "draft_tick_fired_at"} <= saves[1][2]


def test_save_signals_false_sends_none_when_an_action_timeout_writes_a_field(saves, clock):
    hush = Hush.objects.create()
    saves.clear()
    clock.move_to(T + timedelta(days=1, minutes=1))
    run_due_work()
    hush.refresh_from_db()
    assert hush.ticks == 1
    hush.go()
    assert Hush.objects.get(pk=hush.pk).ticks == 2
    assert saves == []


def test_save_signals_carry_the_written_row_not_the_callers_unsaved_edits(saves):
    clearance = Clearance.objects.create(holder="ada")
    saves.clear()
    clearance.holder = "x"  # never saved
    clearance.reject()
    assert [s[3] for s in saves] == [{"state": "rejected", "holder": "ada"}] * 2
    assert Clearance.objects.get(pk=clearance.pk).holder == "ada"


def test_simple_history_records_only_what_was_written():
    clearance = Clearance.objects.create(holder="ada")
    clearance.holder = "x"
    clearance.reject()
    latest = clearance.audit.latest("history_date")
    assert (latest.state, latest.holder) == ("rejected", "ada")


def test_simple_history_diff_leaves_the_step_out_and_the_rows_hold_it():
    clearance = Clearance.objects.create(holder="ada")
    clearance.reject()
    new, old = clearance.audit.order_by("-history_date", "-history_id")[:2]
    assert new.diff_against(old).changed_fields == []  # the step is not editable
    assert (old.state, new.state) == ("draft", "rejected")
