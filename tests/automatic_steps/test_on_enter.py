"""``Step(on_enter=...)``: a durable effect run by the worker once per entry, retried,
never moving the record, even when the record moved on before it ran
(docs/automatic-steps.md, "Effects on entering a step")."""

import logging
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, connections
from django.test import override_settings
from django.utils import timezone
from django_q.models import OrmQ

from django_workflow.engine import run_step
from django_workflow.engine.attempts import POISON_PILL
from django_workflow.models import PendingEffect, TransitionLog, WorkAttempt
from django_workflow.testing import run_due_work
from django_workflow.worker.transport import run_entry
from tests.moments import T
from tests.processes import ROOT, wait_for
from tests.testapp.models import Shipment

pytestmark = pytest.mark.django_db


def printed(shipment):
    return Shipment.objects.get(pk=shipment.pk).labels_printed


def test_each_entry_runs_it_once_after_commit_and_the_record_stays(committed):
    with committed():
        shipment = Shipment.objects.create()
    assert printed(shipment) == 1  # queued on commit; the test settings run tasks inline
    assert Shipment.objects.get(pk=shipment.pk).state == "packing"
    run_due_work()
    assert printed(shipment) == 1  # once per entry
    with committed():
        shipment.ship()
        shipment.return_to_packing()
    assert printed(shipment) == 2  # a new entry, a new run


def test_a_lost_task_is_found_by_the_poll(clock):
    shipment = Shipment.objects.create()  # no commit captured: its task was never queued
    OrmQ.objects.all().delete()
    assert printed(shipment) == 0
    run_due_work()
    assert printed(shipment) == 1


def test_a_crash_mid_effect_runs_it_again_and_a_failure_is_retried(clock):
    shipment = Shipment.objects.create(printer_offline=True)
    run_due_work()
    owed = PendingEffect.objects.get(object_id=str(shipment.pk), step="packing")
    assert (owed.attempts, printed(shipment)) == (1, 0)
    assert owed.last_error == "ConnectionError: printer offline"
    Shipment.objects.filter(pk=shipment.pk).update(printer_offline=False)
    run_due_work()
    assert printed(shipment) == 0  # backing off for a minute
    clock.move_to(T + timedelta(minutes=1, seconds=1))
    run_due_work()
    assert printed(shipment) == 1
    assert Shipment.objects.get(pk=shipment.pk).state == "packing"
    assert not PendingEffect.objects.exists()


def test_a_failure_past_the_last_attempt_halts_that_entry_only(clock):
    shipment = Shipment.objects.create(printer_offline=True)
    for minutes in (0, 2, 4):
        clock.move_to(T + timedelta(minutes=minutes))
        run_due_work()
    owed = PendingEffect.objects.get(object_id=str(shipment.pk))
    assert (owed.attempts, owed.due_at) == (3, None)
    rows = TransitionLog.objects.filter(object_id=str(shipment.pk), transition_name="on_enter")
    assert list(rows.values_list("triggered_by", flat=True)) == ["failed", "failed", "halted"]
    Shipment.objects.filter(pk=shipment.pk).update(printer_offline=False)
    shipment.repack()  # a new entry owes its own effect
    run_due_work()
    assert printed(shipment) == 1
    assert PendingEffect.objects.get().attempts == 3  # the halted one stays for a person


def test_a_self_loop_twice_runs_it_once_per_entry(committed):
    with committed():
        shipment = Shipment.objects.create()
        shipment.repack()
        shipment.repack()
    assert printed(shipment) == 3
    run_due_work()
    assert printed(shipment) == 3


def test_leaving_and_entering_again_before_the_poll_owes_two_effects():
    shipment = Shipment.objects.create()  # no commit captured: no task ran
    shipment.ship()
    shipment.return_to_packing()
    run_due_work()
    assert printed(shipment) == 2


def test_the_task_of_a_record_that_left_the_step_still_runs_its_effect():
    shipment = Shipment.objects.create()
    entered = shipment.state_entered_at
    shipment.ship()
    assert run_entry("testapp.Shipment", shipment.pk, "packing") == 1
    assert printed(shipment) == 1
    assert Shipment.objects.get(pk=shipment.pk).state == "shipped"  # run as it is now
    assert run_entry("testapp.Shipment", shipment.pk, "packing") == 0  # once
    row = TransitionLog.objects.get(object_id=str(shipment.pk), transition_name="on_enter")
    assert (row.from_state, row.to_state) == ("packing", "packing")
    assert row.from_state_entered_at == entered  # the entry it belongs to


def test_an_automatic_step_whose_action_moved_on_first_still_runs_its_effect():
    shipment = Shipment.objects.create()
    shipment.sort()  # no commit captured: neither task ran yet
    assert run_step(Shipment, shipment.pk, "sorting") == "shipped"
    assert run_entry("testapp.Shipment", shipment.pk, "sorting") == 1
    run_due_work()  # and the creation's effect, through the poll
    assert printed(shipment) == 2
    assert Shipment.objects.get(pk=shipment.pk).state == "shipped"


def test_a_deleted_record_owes_nothing():
    shipment = Shipment.objects.create()
    Shipment.objects.filter(pk=shipment.pk).delete()
    run_due_work()
    assert not PendingEffect.objects.exists()


def test_an_effect_cut_short_by_a_crash_runs_again_without_spending_an_attempt(clock, monkeypatch):
    shipment = Shipment.objects.create()
    real = Shipment.print_label

    def killed(self):
        self.labels_printed += 1
        raise KeyboardInterrupt  # the process dies mid-effect: nothing commits

    monkeypatch.setattr(Shipment, "print_label", killed)
    with pytest.raises(KeyboardInterrupt):
        run_due_work()
    assert printed(shipment) == 0
    monkeypatch.setattr(Shipment, "print_label", real)
    run_due_work()
    assert printed(shipment) == 1
    assert not PendingEffect.objects.exists()
    assert not WorkAttempt.objects.filter(object_id=str(shipment.pk)).exists()


def once(env):
    """One ``workflow_worker --once`` process on the test database."""
    connections.close_all()
    return subprocess.run(
        [sys.executable, "-m", "django", "workflow_worker", "--once"],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


#: The lease of a run a killed worker marked passes after a second.
RECOVERY_AFTER_1_S = {"WORKFLOW_RECOVERY_AFTER": "1"}


def lease_passed():
    """Wait until no effect is marked running with a lease still to go."""

    def alive():
        return PendingEffect.objects.filter(alive_until__gt=timezone.now()).exists()

    wait_for(lambda: not alive(), 10, "the lease of the killed run to pass")


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_effect_leaves_it_owed_and_the_next_commits_it_once(tmp_path):
    with override_settings(DJANGO_WORKFLOW={"ENQUEUE_AUTOMATIC_STEPS": False}):
        shipment = Shipment.objects.create()  # committed; its task is lost
    marker = tmp_path / "crash"
    marker.touch()
    killed = once({"SHIPMENT_CRASH_MARKER": str(marker), **RECOVERY_AFTER_1_S})
    assert killed.returncode == 1, killed.stderr  # died inside the effect, after its save
    assert not marker.exists()
    assert printed(shipment) == 0  # its writes rolled back with it
    assert PendingEffect.objects.get().attempts == 0  # a crash spends no attempt
    Shipment.objects.get(pk=shipment.pk).ship()  # moves on before any worker runs again
    lease_passed()
    for _ in range(2):
        assert once({}).returncode == 0
    assert printed(shipment) == 1
    assert Shipment.objects.get(pk=shipment.pk).state == "shipped"
    assert not PendingEffect.objects.exists()
    rows = TransitionLog.objects.filter(object_id=str(shipment.pk), transition_name="on_enter")
    assert rows.count() == 1


def sorted_shipment():
    """A shipment whose creation's effect ran, now owing its entry into sorting (one
    attempt, ``time_limit="2s"``), with no task queued for it."""
    shipment = Shipment.objects.create()
    run_due_work()
    assert printed(shipment) == 1
    Shipment.objects.get(pk=shipment.pk).sort()
    return shipment


def effect_log(shipment):
    rows = TransitionLog.objects.filter(object_id=str(shipment.pk), transition_name="on_enter")
    return list(rows.exclude(triggered_by="timeout").values_list("triggered_by", "attempt"))


def test_an_effect_running_past_the_steps_time_limit_is_stopped_and_spends_its_attempt(
    monkeypatch,
):
    shipment = sorted_shipment()

    def hangs(self):
        self.labels_printed += 1
        time.sleep(30)

    monkeypatch.setattr(Shipment, "print_label", hangs)
    began = time.monotonic()
    run_due_work()
    assert time.monotonic() - began < 10
    owed = PendingEffect.objects.get(step="sorting")
    assert (owed.attempts, owed.due_at, owed.running_since) == (1, None, None)
    assert owed.last_error.startswith("TimeLimitExceeded: the attempt ran past its time limit")
    assert printed(shipment) == 1  # what it set rolled back
    assert effect_log(shipment) == [("halted", 1)]
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no alarm left behind


def test_a_failed_effect_announces_its_retry_as_the_engine_does(clock, caplog):
    Shipment.objects.create(printer_offline=True)  # Retry(max_attempts=3, backoff="1m")
    with caplog.at_level(logging.WARNING, logger="django_workflow"):
        run_due_work()
    [line] = [r.getMessage() for r in caplog.records if "enter:packing" in r.getMessage()]
    assert line.endswith(
        "enter:packing failed, attempt 1 of 3: ConnectionError: printer offline "
        "(next attempt with the poll at 09:01:00, the first after the 60 s backoff)"
    )


@pytest.mark.django_db(transaction=True)
def test_an_effect_that_kills_its_worker_every_time_halts_as_a_poison_pill():
    with override_settings(DJANGO_WORKFLOW={"ENQUEUE_AUTOMATIC_STEPS": False}):
        shipment = sorted_shipment()
    killing = {"SHIPMENT_KILLS_ITS_WORKER": "1", **RECOVERY_AFTER_1_S}
    for _ in range(POISON_PILL):
        lease_passed()
        killed = once(killing)
        assert killed.returncode == 1, killed.stderr
        assert PendingEffect.objects.get(step="sorting").attempts == 0  # not spent
    lease_passed()
    assert once(killing).returncode == 0  # takes it over as failed: it does not run again
    owed = PendingEffect.objects.get(step="sorting")
    assert (owed.attempts, owed.due_at, owed.interruptions) == (1, None, 0)
    assert owed.last_error == "PoisonPill: the attempt was interrupted 3 times (poison pill)"
    assert effect_log(shipment) == [("halted", 1)]


def test_an_effect_run_after_the_record_left_does_not_put_it_back_in_its_history(clock):
    shipment = Shipment.objects.create()
    clock.move_to(T + timedelta(minutes=1))
    shipment.ship()
    clock.move_to(T + timedelta(minutes=2))
    run_due_work()  # the creation's effect, logged in place in packing
    assert printed(shipment) == 1
    assert shipment.state_at(T + timedelta(minutes=3)) == "shipped"


def refuse_log_rows(execute, sql, params, many, context):
    """The log row's INSERT fails, as a write does when SQLite's lock times out."""
    if sql.lstrip().upper().startswith("INSERT") and "transitionlog" in sql.lower():
        raise OperationalError("database is locked")
    return execute(sql, params, many, context)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("create", ["create", "bulk_create"])
def test_a_record_whose_entry_cannot_be_written_is_not_created_either(create):
    """A created record, its log row and the effect its entry owes commit together: a
    record left without them would never get its on_enter."""
    with connection.execute_wrapper(refuse_log_rows), pytest.raises(OperationalError):
        if create == "create":
            Shipment.objects.create()
        else:
            Shipment.objects.bulk_create([Shipment(), Shipment()])
    assert not Shipment.objects.exists()
    assert not PendingEffect.objects.exists()
