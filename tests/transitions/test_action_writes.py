"""What a step change writes, and what it tells save-based apps (docs/transitions.md,
"Code in a transition"; docs/log-and-signals.md, "Save signals")."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
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


def test_simple_history_diff_shows_the_step_a_transition_changed():
    # Release 3's diff showed no change: the history table's copy of the step was not
    # editable, and simple-history diffs editable fields only.
    clearance = Clearance.objects.create(holder="ada")
    clearance.reject()
    new, old = clearance.audit.order_by("-history_date", "-history_id")[:2]
    [change] = new.diff_against(old).changes
    assert (change.field, change.old, change.new) == ("state", "draft", "rejected")
    assert Clearance._meta.get_field("state").editable is False  # the model's own stays


def test_simple_history_takes_the_user_and_reason_set_on_the_record():
    clerk = User.objects.create_user("clerk")
    clearance = Clearance.objects.create(holder="ada")
    clearance._history_user = clerk
    clearance._change_reason = "rejected at the desk"
    clearance.reject()
    latest = clearance.audit.latest("history_date")
    assert (latest.state, latest.history_user, latest.history_change_reason) == (
        "rejected",
        clerk,
        "rejected at the desk",
    )


def test_simple_history_skips_a_transition_of_a_record_marked_to_skip():
    clearance = Clearance.objects.create(holder="ada")
    clearance.skip_history_when_saving = True
    clearance.reject()
    assert [row.state for row in clearance.audit.order_by("history_date")] == ["draft"]
    assert Clearance.objects.get(pk=clearance.pk).state == "rejected"
