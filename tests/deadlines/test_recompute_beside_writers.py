"""A worker starting after the declaration of deadlines changed computes every due
instant again without keeping other writers waiting (docs/deadlines.md)."""

import os
import subprocess
import sys

import pytest
from django.db import connection, connections

from django_workflow.models import DeadlineDeclaration
from tests.processes import ROOT
from tests.testapp.models import Appeal
from tests.writers import Writer

# Timed with the machine to itself: beside the suites the load it would time is theirs.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.alone]

RECORDS = 20_000


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's one writer")
def test_other_writers_get_their_turn_while_a_worker_recomputes_due_instants():
    Appeal._base_manager.bulk_create([Appeal() for _ in range(RECORDS)], batch_size=1000)
    DeadlineDeclaration.objects.all().delete()  # the deploy changed the declaration:
    DeadlineDeclaration.objects.create(model="testapp.Appeal", fingerprint="before the deploy")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    env["WORKFLOW_DB_NAME"] = str(connection.settings_dict["NAME"])
    connections.close_all()
    worker = subprocess.Popen(
        [sys.executable, "-m", "django", "workflow_worker", "--once"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    writer = Writer()
    writer.start()
    try:
        output, _ = worker.communicate(timeout=300)
    finally:
        writer.done.set()
        writer.join()
    assert worker.returncode == 0, output
    assert "testapp.Appeal: its deadlines changed" in output
    assert writer.writes > 0
    # Back-to-back 1,000-row transactions kept a writer waiting over 12 s here; 30 ms
    # pauses, shorter than the busy handler's 50 and 100 ms retry intervals once a writer
    # had waited 128 ms, still 1-4.6 s. A wait is now one batch of 50 records and one
    # pause (at most 115 ms): 0.19-0.57 s measured with the machine's two cores loaded
    # six times over, hence the margin.
    assert writer.longest < 1.0
