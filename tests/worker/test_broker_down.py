"""A broker that cannot be reached after a transition committed: the caller is not told
an error about a move that happened; the poll runs what could not be queued
(docs/automatic-steps.md, "When the broker is down"). Nor does a worker's first poll
that cannot be queued stop it: the Schedules poll (docs/worker.md)."""

import os
import socket
import subprocess
import sys
import textwrap

import pytest
from django.db import connection, connections

from django_workflow.testing import run_due_work
from tests.processes import ROOT
from tests.testapp.models import Candidate, Shipment

pytestmark = pytest.mark.django_db(transaction=True)

#: Runs in a process whose django-q2 uses its Redis broker on a port nobody listens on.
MOVES = textwrap.dedent(
    """
    import sys
    from types import SimpleNamespace

    import django

    django.setup()
    from tests.testapp.models import Candidate, Shipment

    shipment, candidate = int(sys.argv[1]), int(sys.argv[2])
    Shipment.objects.get(pk=shipment).return_to_packing()
    recruiter = SimpleNamespace(role="recruiter")
    outcomes = Candidate.objects.filter(pk=candidate).transition("rescreen", actor=recruiter)
    print("outcomes:", outcomes)
    """
)

#: The polling scheduler's kick-off, in a process whose broker cannot be reached.
KICK_OFF = textwrap.dedent(
    """
    import django

    django.setup()
    from django_workflow.worker.schedulers import PollingScheduler, all_works

    works = all_works()
    PollingScheduler().kick_off(works, sorted({work.queue for work in works}))
    print("kicked off")
    """
)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def unreachable_broker() -> dict[str, str]:
    connections.close_all()
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),  # tasks go to the broker
        "WORKFLOW_BROKER": "redis",
        "WORKFLOW_REDIS_PORT": str(closed_port()),
    }


def test_a_committed_move_returns_to_its_caller_and_the_poll_runs_its_work():
    # rows as they stand, written without the workflow (nothing queued, nothing run)
    (shipment,) = Shipment._base_manager.bulk_create([Shipment()])
    Shipment._base_manager.filter(pk=shipment.pk).update(state="shipped")
    (candidate,) = Candidate._base_manager.bulk_create([Candidate(name="ada")])
    Candidate._base_manager.filter(pk=candidate.pk).update(state="interview")
    result = subprocess.run(
        [sys.executable, "-c", MOVES, str(shipment.pk), str(candidate.pk)],
        cwd=ROOT,
        env=unreachable_broker(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert f"outcomes: {{{candidate.pk}: 'screening'}}" in result.stdout
    assert result.stderr.count("could not be queued") == 2, result.stderr
    assert Shipment.objects.get(pk=shipment.pk).labels_printed == 0
    run_due_work()  # the poll: the safety net behind every queued task
    assert Shipment.objects.get(pk=shipment.pk).labels_printed == 1
    assert Candidate.objects.get(pk=candidate.pk).screening_runs == 1


def test_a_first_poll_that_cannot_be_queued_is_logged_and_left_to_the_schedules():
    result = subprocess.run(
        [sys.executable, "-c", KICK_OFF],
        cwd=ROOT,
        env=unreachable_broker(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "kicked off\n"
    said = "the first polls could not be queued (Error 111 connecting to 127.0.0.1:"
    assert result.stderr.count(said) == 1, result.stderr  # once: the broker is down for all
    assert "the Schedules poll within about 30 s" in result.stderr
