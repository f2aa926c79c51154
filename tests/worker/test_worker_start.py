"""A worker told to stop while its django-q2 cluster is still starting stops cleanly
(docs/worker.md, "Stopping")."""

import os
import signal
import subprocess
import sys

import pytest
from django.db import connection, connections

from tests.processes import ROOT, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def starting_worker(log):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),
    }
    connections.close_all()
    with log.open("w") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "django", "workflow_worker"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@pytest.mark.parametrize("whole_group", [True, False])
def test_sigterm_while_the_cluster_starts_exits_0(tmp_path, whole_group):
    log = tmp_path / "worker.log"
    process = starting_worker(log)
    try:
        # the Schedules are synced right before the cluster starts
        wait_for(lambda: "schedules:" in log.read_text(), 60, "the worker to sync")
        (os.killpg if whole_group else os.kill)(process.pid, signal.SIGTERM)
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = log.read_text()
    assert code == 0, output
    assert "unexpectedly" not in output and "Traceback" not in output
    assert output.rstrip().endswith("stopped")
