"""The "celery" transport (docs/transports.md): work queued as records enter steps goes
to Celery (``acks_late``) on the Redis server the test script starts, and a Celery
worker runs it."""

import os
import signal
import subprocess
import sys
import time

import pytest
from django.db import connection, connections

from tests.helpers import fresh
from tests.processes import ROOT
from tests.testapp.models import Import

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not os.environ.get("WORKFLOW_REDIS_PORT"),
        reason="needs the Redis server scripts/redis.sh starts (make test starts it)",
    ),
]


@pytest.fixture
def on_celery(settings):
    settings.DJANGO_WORKFLOW = {**settings.DJANGO_WORKFLOW, "TRANSPORT": "celery"}


def test_an_automatic_step_queued_on_celery_runs_in_its_worker(on_celery):
    record = Import.objects.create()  # its first step is automatic: queued after commit
    assert fresh(record).state == "parse"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),
        "WORKFLOW_TRANSPORT": "celery",
    }
    connections.close_all()
    command = [sys.executable, "-m", "celery", "-A", "tests.celery_app:app", "worker",
               "--pool", "solo", "--queues", "workflow", "--loglevel", "WARNING"]  # fmt: skip
    output = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    worker = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, **output)
    try:
        deadline = time.monotonic() + 60
        while fresh(record).state == "parse" and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        said = worker.communicate(timeout=30)[0]
    assert (fresh(record).state, fresh(record).rows) == ("done", 42), said
