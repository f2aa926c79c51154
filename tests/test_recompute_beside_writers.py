"""A worker starting after the declaration of deadlines changed computes every due
instant again without keeping other writers waiting (docs/deadlines.md)."""

import os
import subprocess
import sys
import threading
import time

import pytest
from django.db import connection, connections, transaction

from django_workflow.models import DeadlineDeclaration
from tests.processes import ROOT
from tests.testapp.models import Appeal, Ticket

pytestmark = pytest.mark.django_db(transaction=True)

RECORDS = 20_000


class Writer(threading.Thread):
    """Writes one row as often as it may; notes the longest any write waited."""

    def __init__(self) -> None:
        super().__init__()
        self.done = threading.Event()
        self.longest = 0.0
        self.writes = 0

    def run(self) -> None:
        ticket = Ticket.objects.create()
        try:
            while not self.done.is_set():
                started = time.monotonic()
                with transaction.atomic():
                    Ticket._base_manager.filter(pk=ticket.pk).update(reopened=self.writes)
                self.longest = max(self.longest, time.monotonic() - started)
                self.writes += 1
                time.sleep(0.005)
        finally:
            connections.close_all()


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
    # back-to-back 1,000-row transactions kept a writer waiting over 12 s here
    assert writer.longest < 2.0
