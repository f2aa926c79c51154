"""The "django_tasks" transport (docs/transports.md): work queued as records enter steps
goes to Django's tasks, here their database backend, and its own worker command runs it."""

import os
import subprocess
import sys

import pytest
from django.db import connection, connections
from django_tasks_db.models import DBTaskResult

from tests.helpers import fresh
from tests.processes import ROOT
from tests.testapp.models import Import

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def on_django_tasks(settings):
    settings.DJANGO_WORKFLOW = {**settings.DJANGO_WORKFLOW, "TRANSPORT": "django_tasks"}


def db_worker():
    """``manage.py db_worker`` on the test database until its queue is empty."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),
        "WORKFLOW_TRANSPORT": "django_tasks",
    }
    connections.close_all()
    command = [sys.executable, "-m", "django", "db_worker", "--batch", "--queue-name", "workflow"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_an_automatic_step_queued_on_djangos_tasks_runs_in_their_worker(on_django_tasks):
    record = Import.objects.create()  # its first step is automatic: queued after commit
    [queued] = DBTaskResult.objects.all()
    assert (queued.queue_name, queued.status) == ("workflow", "READY")
    assert queued.args_kwargs["args"][:3] == [
        "django_workflow.worker.transport.run_automatic_steps",
        "testapp.Import",
        "parse",
    ]
    assert fresh(record).state == "parse"
    db_worker()
    assert (fresh(record).state, fresh(record).rows) == ("done", 42)
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"
