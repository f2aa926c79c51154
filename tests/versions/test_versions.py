"""Versions (docs/versions.md): a record runs on the declaration it started with, and
moves to another only when upgraded."""

from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command
from django.utils import timezone

from django_workflow import TransitionNotAllowed, UnmappedSteps
from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from tests.helpers import fresh
from tests.testapp.models import Tender

pytestmark = pytest.mark.django_db(transaction=True)


def on_version_1(**values):
    """A record as version 1 left it (created before version 2 was deployed)."""
    tender = Tender.objects.create(**values)
    Tender.objects.filter(pk=tender.pk).update(workflow_version=1)
    return fresh(tender)


def test_a_new_record_starts_on_the_current_version():
    tender = Tender.objects.create()
    assert tender.workflow_version == 2
    assert fresh(tender).workflow.version == 2


def test_the_migration_gives_existing_rows_the_lowest_declared_version():
    field = Tender._meta.get_field("workflow_version")
    _name, path, _args, kwargs = field.deconstruct()
    assert (path, kwargs["default"], kwargs["db_index"]) == (
        "django.db.models.PositiveSmallIntegerField",
        1,
        True,
    )


def test_the_state_field_offers_the_steps_of_every_version():
    steps = [name for name, _label in Tender._meta.get_field("state").choices]
    assert steps == ["draft", "checking", "review", "approved", "legacy"]


def test_each_record_takes_the_transitions_of_its_own_version():
    old, new = on_version_1(), Tender.objects.create()
    old.submit()
    new.submit()  # into checking, which the worker (synchronous here) runs at once
    assert (fresh(old).state, fresh(old).checks) == ("review", 0)
    assert (fresh(new).state, fresh(new).checks) == ("review", 1)
    assert [row.to_state for row in fresh(new).workflow.history()] == [
        "draft",
        "checking",
        "review",
    ]
    assert fresh(old).workflow.available_actions() == ["approve", "withdraw"]
    assert fresh(new).workflow.available_actions() == ["approve"]


def test_a_transition_only_an_older_version_offers_is_refused_on_the_current_one():
    new = Tender.objects.create()
    Tender.objects.filter(pk=new.pk).update(state="review")
    new = fresh(new)
    entered = new.state_entered_at
    with pytest.raises(TransitionNotAllowed):
        new.withdraw()
    assert (fresh(new).state, fresh(new).state_entered_at) == ("review", entered)
    old = on_version_1()
    old.submit()
    fresh(old).withdraw()
    assert fresh(old).state == "draft"


def test_deadlines_are_computed_by_the_records_own_version():
    old, new = on_version_1(), Tender.objects.create()
    old.submit()
    new.submit()
    run_due_work()
    old, new = fresh(old), fresh(new)
    later = timezone.now() + timedelta(days=2, hours=1)
    with time_machine.travel(later, tick=False):
        run_due_work()
    assert fresh(new).state == "draft"  # two days on version 2
    assert fresh(old).state == "review"  # three on version 1
    with time_machine.travel(later + timedelta(days=1), tick=False):
        run_due_work()
    assert fresh(old).state == "draft"
    assert fresh(old).workflow_version == 1


def test_an_upgrade_moves_the_record_logs_it_and_keeps_its_stay():
    old = on_version_1()
    old.submit()
    old = fresh(old)
    entered = old.state_entered_at
    old.workflow.upgrade(to=2)
    assert (old.workflow_version, old.state, old.state_entered_at) == (2, "review", entered)
    row = TransitionLog.objects.filter(object_id=str(old.pk)).order_by("-id").first()
    assert (row.triggered_by, row.from_state, row.to_state, row.data) == (
        "upgrade",
        "review",
        "review",
        {"from_version": 1, "to_version": 2},
    )
    fresh(old).approve()
    assert fresh(old).state == "approved"


def test_an_upgraded_record_falls_due_by_the_new_version_counted_from_its_entry():
    old = on_version_1()
    old.submit()
    old = fresh(old)
    assert old.next_due_at == old.state_entered_at + timedelta(days=1)
    with time_machine.travel(old.state_entered_at + timedelta(days=1, hours=1), tick=False):
        run_due_work()  # the reminder fires on version 1
        assert fresh(old).reminders == 1
        fresh(old).workflow.upgrade(to=2)
        assert fresh(old).next_due_at == old.state_entered_at + timedelta(days=2)
        run_due_work()
    assert fresh(old).reminders == 1  # its mark stays: never twice
    with time_machine.travel(old.state_entered_at + timedelta(days=2, hours=1), tick=False):
        run_due_work()
    assert fresh(old).state == "draft"


def test_an_upgrade_refuses_unmapped_steps_and_moves_nothing():
    shelved = on_version_1()
    shelved.shelve()
    waiting = on_version_1()
    with pytest.raises(UnmappedSteps) as refused:
        fresh(shelved).workflow.upgrade(to=2)
    assert refused.value.unmapped == {(1, "legacy"): 1}
    assert "'legacy' of version 1 (1 record)" in str(refused.value)
    assert fresh(shelved).workflow_version == 1
    assert fresh(waiting).workflow_version == 1
    fresh(shelved).workflow.upgrade(to=2, steps={"legacy": "draft"})
    assert (fresh(shelved).state, fresh(shelved).workflow_version) == ("draft", 2)


def test_an_upgrade_to_an_undeclared_version_names_the_declared_ones():
    with pytest.raises(ValueError, match="has no version 3; it declares 1, 2"):
        on_version_1().workflow.upgrade(to=3)


def test_the_command_moves_in_batches_and_says_so():
    records = [on_version_1() for _ in range(3)]
    out = StringIO()
    call_command("workflow_upgrade", "testapp.Tender", "--to", "2", "--batch", "2", stdout=out)
    assert [fresh(r).workflow_version for r in records] == [2, 2, 2]
    assert out.getvalue().splitlines()[:4] == [
        "testapp.Tender: to version 2",
        "  version 1, draft: 3 records",
        "  2 of 3 moved",
        "  3 of 3 moved",
    ]
    assert "3 records moved to version 2" in out.getvalue()


def test_the_command_refuses_unmapped_steps_naming_them_and_their_counts():
    shelved = on_version_1()
    shelved.shelve()
    on_version_1()
    with pytest.raises(CommandError, match=r"no step 'legacy' of version 1 \(1 record\)"):
        call_command("workflow_upgrade", "testapp.Tender", "--to", "2", stdout=StringIO())
    assert set(Tender.objects.values_list("workflow_version", flat=True)) == {1}
    call_command(
        "workflow_upgrade", "Tender", "--to", "2", "--map", "legacy=draft", stdout=StringIO()
    )
    assert (fresh(shelved).state, fresh(shelved).workflow_version) == ("draft", 2)


def test_a_dry_run_prints_the_deadlines_that_would_change_and_writes_nothing():
    waiting = on_version_1()
    waiting.submit()
    on_version_1()
    logged = TransitionLog.objects.count()
    out = StringIO()
    call_command("workflow_upgrade", "testapp.Tender", "--to", "2", "--dry-run", stdout=out)
    assert out.getvalue().splitlines() == [
        "testapp.Tender: to version 2",
        "  version 1, draft: 1 record",
        "  version 1, review: 1 record",
        "    deadline 'expire': due instant changes for 1 record",
        "Dry run: nothing was written.",
    ]
    assert set(Tender.objects.values_list("workflow_version", flat=True)) == {1}
    assert TransitionLog.objects.count() == logged


def test_the_command_from_one_version_leaves_the_others():
    old = on_version_1()
    new = Tender.objects.create()
    call_command(
        "workflow_upgrade", "testapp.Tender", "--to", "1", "--from", "2", stdout=StringIO()
    )
    assert (fresh(old).workflow_version, fresh(new).workflow_version) == (1, 1)


def test_the_due_instants_an_upgrade_writes_are_the_ones_the_engine_computes(time_machine):
    """On PostgreSQL the upgrade's statement computes them from the row; elsewhere the
    engine does: either way, what ``next_due`` says of the upgraded record."""
    from django_workflow.deadlines import next_due

    start = timezone.now()
    records = []
    for hours in (2, 20, 30, 47):  # some past the reminder (fired), none past expiry
        time_machine.move_to(start - timedelta(hours=hours), tick=False)
        record = on_version_1()
        record.submit()
        records.append(record)
    time_machine.move_to(start, tick=False)
    run_due_work()
    assert sorted(fresh(r).reminders for r in records) == [0, 0, 1, 1]
    call_command("workflow_upgrade", "testapp.Tender", "--to", "2", stdout=StringIO())
    for record in map(fresh, records):
        assert record.workflow_version == 2
        assert record.next_due_at == next_due(record)
