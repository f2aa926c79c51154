"""A worker killed while it completes children (docs/transitions.md, "Joins: a parent
waiting for its children"; docs/worker.md, "Stops, crashes and time limits"): after a
new worker recovers, every parent moved exactly once.

Real ``manage.py workflow_worker`` subprocesses on the test database. Each pick (a
child) is an automatic step that notes its start in a file and sleeps; its wave (the
parent) waits in a join step for its picks. The first worker is killed with SIGKILL
once some waves moved on, while a pick's action runs: that pick rolls back, with any
move of its wave, and runs again on the next worker (docs/automatic-steps.md: an action
cut short by a crash runs again; its database writes commit once).
"""

import os
import signal
from collections import Counter

import pytest

from django_workflow.models import TransitionLog
from tests.processes import queued_for_the_worker, quick_recovery, wait_for, worker
from tests.testapp.models import Pick, Wave

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

WAVES, PICKS = 30, 3
#: Two django-q2 processes: at most two picks are in flight when the worker dies.
PROCESSES = 2
FAST = quick_recovery(PROCESSES)


def released_waves(trace):
    """Waves whose picks wait for the worker (queued, none run yet), each released."""
    with queued_for_the_worker:
        waves = [Wave.objects.create() for _ in range(WAVES)]
        for wave in waves:
            for _ in range(PICKS):
                Pick.objects.create(wave=wave, trace=str(trace), sleep_seconds=0.2)
            wave.release()
    return waves


def started(trace):
    return trace.read_text().count("start")


def in_flight(trace):
    """Whether a pick's action has started and not committed (read in that order, so a
    pick committing between the two reads is not taken for one in flight)."""
    starts = started(trace)
    return starts > Pick.objects.filter(state="picked").count()


def logged(model, trigger):
    rows = TransitionLog.objects.filter(content_type__model=model, triggered_by=trigger)
    return list(rows.values_list("object_id", "from_state", "to_state", "data"))


def test_a_worker_killed_while_completing_children_moves_every_parent_exactly_once(tmp_path):
    trace = tmp_path / "trace"
    trace.touch()
    waves = released_waves(trace)
    assert set(Wave.objects.values_list("state", flat=True)) == {"picking"}
    with worker(tmp_path, "first", env=FAST) as first:
        moved = Wave.objects.filter(state="picked")
        wait_for(lambda: moved.exists() and in_flight(trace), 120, "a wave moved, a pick running")
        os.killpg(first.pid, signal.SIGKILL)  # OOM killer, power loss: no goodbye
        first.wait()
    assert Pick.objects.filter(state="picking").exists()  # killed mid-way
    with worker(tmp_path, "second", env=FAST):
        done = Wave.objects.filter(state="picked")
        wait_for(lambda: done.count() == WAVES, 180, "every wave to move")
    picks_of = {
        wave.pk: {str(pk) for pk in wave.picks.values_list("pk", flat=True)} for wave in waves
    }
    joins = logged("wave", "join")
    assert sorted(object_id for object_id, *_ in joins) == sorted(str(w.pk) for w in waves)
    for object_id, from_state, to_state, data in joins:
        assert (from_state, to_state) == ("picking", "picked")
        label, pk = data["child"].split()
        assert label == "testapp.Pick" and pk in picks_of[int(object_id)]
    assert set(Pick.objects.values_list("state", "runs")) == {("picked", 1)}
    moved = Counter(object_id for object_id, *_ in logged("pick", "automatic"))
    assert set(moved.values()) == {1} and len(moved) == WAVES * PICKS
    starts = Counter(trace.read_text().split())
    del starts["start"]
    again = [pk for pk, count in starts.items() if count > 1]
    assert len(starts) == WAVES * PICKS  # every pick ran
    assert max(starts.values()) == 2 and 1 <= len(again) <= PROCESSES, again  # the cut short
