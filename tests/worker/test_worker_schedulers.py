"""The worker drives whatever the scheduler registry holds: it syncs every scheduler at
its start and runs each one's loop beside its clusters until it stops (docs/worker.md)."""

import pytest

from django_workflow.worker.schedulers import all_works
from tests.processes import wait_for, worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

WITH_A_THIRD_SCHEDULER = {"DJANGO_SETTINGS_MODULE": "tests.settings_extra_scheduler"}


def test_a_registered_scheduler_is_synced_and_its_loop_runs_until_the_worker_stops(tmp_path):
    log = tmp_path / "worker.log"
    with worker(tmp_path, env=WITH_A_THIRD_SCHEDULER):
        wait_for(lambda: "tally loop running" in log.read_text(), 30, "the tally loop")
    output = log.read_text()
    assert f"tallies: seen {len(all_works())}\n" in output
    assert "tally loop running in tally\n" in output  # its thread is named by its label
    assert output.rstrip().endswith("stopped")
    assert "tally loop stopped\n" in output  # the worker waited for it
    assert "schedules: added" in output  # the built-in schedulers still run
