"""On PostgreSQL one worker recomputes the due instants after the declaration of deadlines
changed; another starting meanwhile goes on to its polls at once (docs/deadlines.md)."""

import os
import subprocess
import sys

import pytest
from django.db import connection, connections

from django_workflow.models import DeadlineDeclaration
from tests.processes import ROOT, wait_for
from tests.testapp.models import Appeal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

RECORDS = 30_000
RECOMPUTES = "testapp.Appeal: its deadlines changed; computing next_due_at of every record"
GOES_ON = "testapp.Appeal: its deadlines changed; another worker recomputes them"


def start_worker(log):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    env["WORKFLOW_DB_NAME"] = str(connection.settings_dict["NAME"])
    with log.open("w") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "django", "workflow_worker", "--once"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's advisory lock")
def test_a_second_worker_polls_at_once_while_the_first_recomputes(tmp_path):
    Appeal._base_manager.bulk_create([Appeal() for _ in range(RECORDS)], batch_size=1000)
    DeadlineDeclaration.objects.all().delete()  # the deploy changed the declaration:
    DeadlineDeclaration.objects.create(model="testapp.Appeal", fingerprint="before the deploy")
    connections.close_all()
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start_worker(first_log)
    try:
        wait_for(lambda: RECOMPUTES in first_log.read_text(), 60, "the first to recompute")
        second = start_worker(second_log)
        assert second.wait(timeout=120) == 0, second_log.read_text()
        still_recomputing = first.poll() is None
        assert first.wait(timeout=300) == 0, first_log.read_text()
    finally:
        if first.poll() is None:
            first.kill()
    said = second_log.read_text()
    assert GOES_ON in said and RECOMPUTES not in said
    assert "done:" in said  # it polled
    assert still_recomputing  # without waiting for the first
    assert GOES_ON not in first_log.read_text()
    stored = DeadlineDeclaration.objects.get(model="testapp.Appeal").fingerprint
    assert stored != "before the deploy"
