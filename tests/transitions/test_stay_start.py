"""Every log row names when its record had entered ``from_state``: the start of the
stay the row ends or happens in (docs/log-and-signals.md), which the time-in-step
report reads a stay from (docs/report.md).

The clock stands still between moves, so the engine's entry instant and the entry
row's ``occurred_at`` are the same instant: each row's stay start must be the
``occurred_at`` of the record's latest entry row before it.
"""

import importlib
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection

from django_workflow import run_work
from django_workflow.engine import run_step
from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from tests.moments import T
from tests.testapp.models import Candidate, Decision, Proposal, Recheck, Routed

pytestmark = pytest.mark.django_db

migration = importlib.import_module("django_workflow.migrations.0007_log_stay_start")


def rows_of(record):
    rows = TransitionLog.objects.filter(
        content_type=ContentType.objects.get_for_model(record), object_id=str(record.pk)
    )
    return list(rows.order_by("occurred_at", "id"))


def begins_a_stay(row):
    moved_back = row.transition_name == "recheck"  # Recheck's timeout into its own step
    in_place = row.from_state == row.to_state and row.triggered_by == "timeout"
    return (moved_back or not in_place) and row.triggered_by not in ("failed", "halted")


def expected_starts(rows):
    """Per row, the ``occurred_at`` of the latest row before it that began a stay."""
    starts, entered = [], None
    for row in rows:
        starts.append(entered if row.from_state else None)
        if begins_a_stay(row):
            entered = row.occurred_at
    return starts


def assert_stays_named(record, triggers):
    rows = rows_of(record)
    assert [row.triggered_by for row in rows] == triggers
    assert [row.from_state_entered_at for row in rows] == expected_starts(rows)
    assert rows[0].from_state_entered_at is None  # the creation ends no stay
    assert all(row.from_state_entered_at for row in rows[1:])


def at(clock, **offset):
    clock.move_to(T + timedelta(**offset), tick=False)


def test_manual_moves_and_a_move_back_into_the_same_step(clock):
    proposal = Proposal.objects.create()
    at(clock, hours=1)
    proposal.bounce()  # review -> review: one stay ends, the next begins
    at(clock, hours=3)
    proposal.approve()
    assert_stays_named(proposal, ["initial", "manual", "manual"])
    assert rows_of(proposal)[2].from_state_entered_at == T + timedelta(hours=1)


def test_timeouts_firing_in_place_and_moving_in_a_batch(clock):
    proposal = Proposal.objects.create()
    at(clock, days=2)
    run_due_work()  # the reminder and others fire in place: the stay goes on
    at(clock, days=10)
    run_due_work()  # the escalation moves it
    rows = rows_of(proposal)
    assert {row.from_state_entered_at for row in rows[1:]} == {T}
    assert rows[-1].to_state == "escalated"
    assert_stays_named(proposal, [row.triggered_by for row in rows])


def test_automatic_steps_failed_attempts_and_the_error_path(clock):
    candidate = Candidate.objects.create(resume_words=-5)  # fails; three attempts, 30 s apart
    for seconds in (0, 30, 60):
        at(clock, seconds=seconds)
        run_step(Candidate, candidate.pk, "screening")
    assert_stays_named(candidate, ["initial", "failed", "failed", "error_path"])


def test_an_automatic_step_that_succeeds(clock, committed):
    with committed():
        candidate = Candidate.objects.create(resume_words=900)
    assert_stays_named(candidate, ["initial", "automatic"])


def test_an_undo(clock):
    user = User.objects.create_user("ada")
    decision = Decision.objects.create()
    at(clock, minutes=5)
    decision.reject(actor=user)
    at(clock, minutes=10)
    decision.undo(actor=user)
    assert_stays_named(decision, ["initial", "manual", "undo"])
    assert rows_of(decision)[2].from_state_entered_at == T + timedelta(minutes=5)


def test_a_bulk_move_names_each_records_own_stay(clock):
    first = Routed.objects.create(amount=5)
    at(clock, hours=2)
    second = Routed.objects.create(amount=500)
    at(clock, hours=4)
    outcomes = Routed.objects.filter(pk__in=[first.pk, second.pk]).transition("size")
    assert outcomes == {first.pk: "small", second.pk: "large"}
    assert rows_of(first)[1].from_state_entered_at == T
    assert rows_of(second)[1].from_state_entered_at == T + timedelta(hours=2)
    for record in (first, second):
        assert_stays_named(record, ["initial", "manual"])


@pytest.mark.skipif(
    connection.vendor not in ("sqlite", "postgresql"), reason="the backfill runs on these only"
)
def test_the_migration_fills_in_rows_written_before_it_from_the_log_itself(clock):
    proposal, candidate = Proposal.objects.create(), Candidate.objects.create(resume_words=-5)
    at(clock, hours=1)
    proposal.bounce()
    for seconds in (0, 30, 60):
        at(clock, hours=2, seconds=seconds)
        run_step(Candidate, candidate.pk, "screening")
    at(clock, days=10)
    run_due_work()
    written = dict(TransitionLog.objects.values_list("pk", "from_state_entered_at"))
    ending = TransitionLog.objects.exclude(from_state="").count()
    assert sum(value is not None for value in written.values()) == ending >= 6
    TransitionLog.objects.update(from_state_entered_at=None)
    migration.fill_stay_starts(connection)
    assert dict(TransitionLog.objects.values_list("pk", "from_state_entered_at")) == written


def test_a_timeout_back_into_its_own_step_begins_a_new_stay(clock):
    record = Recheck.objects.create()
    at(clock, days=1)
    run_work(Recheck, "timeout:checking.recheck")
    at(clock, days=1, hours=6)
    record.refresh_from_db()
    record.pass_check()
    assert_stays_named(record, ["initial", "timeout", "manual"])
    assert rows_of(record)[2].from_state_entered_at == T + timedelta(days=1)
