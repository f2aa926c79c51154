"""A worker killed while it applies buffered events at step entry (docs/events.md, "Early
events: the buffer"; docs/worker.md, "Stops, crashes and time limits"): after a second
worker finishes, every buffered event was applied exactly once, none lost.

Real ``manage.py workflow_worker`` subprocesses on the test database. Each package's
carrier scans (``collected``, ``delivered``) are buffered before the worker packs it;
packing (an automatic step) enters ``ready``, which lets in ``collected``, whose move lets
in ``delivered``, all in the step's transaction. Packing and the collection each note
their start in a file and sleep. The first worker is killed with SIGKILL while a
collection runs: that package's transaction rolls back, its scans stay buffered, and the
next worker packs it again and applies them.
"""

import os
import signal
from collections import Counter

import pytest

from django_workflow import deliver
from django_workflow.models import EventDelivery, TransitionLog
from tests.processes import queued_for_the_worker, quick_recovery, wait_for, worker
from tests.testapp.models import Package

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

PACKAGES = 30
PROCESSES = 2
FAST = quick_recovery(PROCESSES)


def packages_with_buffered_scans(trace):
    """Packages waiting for the worker, each with both scans buffered (the later one first:
    the step each enters decides the order, not the delivery)."""
    with queued_for_the_worker:
        packages = [
            Package.objects.create(ref=f"pkg_{n}", trace=str(trace), sleep_seconds=0.2)
            for n in range(PACKAGES)
        ]
    for package in packages:
        deliver("carrier.delivered", package.ref, id=f"d_{package.ref}")
        deliver("carrier.collected", package.ref, id=f"c_{package.ref}")
    return packages


def collections_in_flight(trace):
    """Whether a collection has started and not committed (read in that order, so one
    committing between the two reads is not taken for one in flight)."""
    collecting = trace.read_text().count("collect ")
    return collecting > Package.objects.filter(state="delivered").count()


def test_buffered_events_applied_at_step_entry_survive_a_killed_worker(tmp_path):
    trace = tmp_path / "trace"
    trace.touch()
    packages = packages_with_buffered_scans(trace)
    assert Counter(EventDelivery.objects.values_list("outcome", flat=True)) == {
        "buffered": 2 * PACKAGES
    }
    done = Package.objects.filter(state="delivered")
    with worker(tmp_path, "first", env=FAST) as first:
        wait_for(
            lambda: done.exists() and collections_in_flight(trace), 120, "a collection running"
        )
        os.killpg(first.pid, signal.SIGKILL)  # OOM killer, power loss: no goodbye
        first.wait()
    assert done.count() < PACKAGES  # killed mid-way
    with worker(tmp_path, "second", env=FAST):
        wait_for(lambda: done.count() == PACKAGES, 180, "every package delivered")

    # Every scan applied once, none left waiting, none lost.
    rows = EventDelivery.objects.values_list("event_id", "outcome")
    assert sorted(rows) == sorted(
        [(f"c_{p.ref}", "applied") for p in packages]
        + [(f"d_{p.ref}", "applied") for p in packages]
    )
    # One log row per scan, each in its place: packed, collected, delivered.
    for package in packages:
        log = TransitionLog.objects.filter(object_id=str(package.pk)).order_by("pk")
        assert list(log.values_list("triggered_by", "transition_name", "data")) == [
            ("initial", "", None),
            ("automatic", "pack", None),
            ("event", "collect", {"event": "carrier.collected", "id": f"c_{package.ref}"}),
            ("event", "deliver", {"event": "carrier.delivered", "id": f"d_{package.ref}"}),
        ], package.ref
    # The kill cut work short: some collection started twice, on each worker once.
    collections = Counter(line for line in trace.read_text().splitlines() if "collect" in line)
    again = [line for line, count in collections.items() if count > 1]
    assert len(collections) == PACKAGES and max(collections.values()) == 2
    assert 1 <= len(again) <= PROCESSES, again
