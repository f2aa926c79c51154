"""A django-q2 worker process killed while it waits for a task (the OOM killer, an
operator's ``kill -9``) takes the task queue's read lock with it: every worker, the one
the sentinel starts in its place included, then waits for that lock for good. The worker
notices a cluster whose workers all wait on a lock and builds it again (docs/worker.md).
"""

import os
import signal

import pytest

from django_workflow.models import WorkAttempt
from django_workflow.worker.stop_signals import WORKER_NAME
from django_workflow.worker.supervisor import WEDGED_FOR
from tests.processes import queued_for_the_worker, wait_for, worker
from tests.testapp.models import Order, Pause

# Run with the machine to itself: a cluster built again beside the suites' load took
# longer than the wait allows.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.alone]


def children(pid):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            found.append(int(name))
    return sorted(found)


def proc(pid, what):
    with open(f"/proc/{pid}/{what}") as found:
        return found.read().strip()


def idle_readers(worker_pid):
    """Per cluster, the worker reading the task queue's pipe: it holds the queue's lock."""
    readers = []
    for sentinel in children(worker_pid):
        workers = [pid for pid in children(sentinel) if proc(pid, "comm") == WORKER_NAME]
        readers += [pid for pid in workers if "pipe_read" in proc(pid, "wchan")]
    return readers


def test_a_worker_process_killed_while_it_waits_for_a_task_does_not_stall_the_queue(tmp_path):
    with worker(tmp_path, env={"WORKFLOW_Q_WORKERS": "2"}) as process:
        every_queue = lambda: len(idle_readers(process.pid)) == len(children(process.pid))  # noqa: E731
        wait_for(every_queue, 30, "an idle worker reading each queue")
        for pid in idle_readers(process.pid):
            os.kill(pid, signal.SIGKILL)
        with queued_for_the_worker:
            order = Order.objects.create()
            order.place()
        shipped = lambda: Order.objects.get(pk=order.pk).status == "shipped"  # noqa: E731
        wait_for(shipped, WEDGED_FOR + 60, "the chain, on the cluster built again")
        log = (tmp_path / "worker.log").read_text()
    assert "starting the cluster again" in log
    assert Order.objects.get(pk=order.pk).visited == "charge,reserve,pack,ship,"


def test_a_busy_worker_whose_action_waits_on_a_lock_is_left_alone(tmp_path):
    # Its process waits on a futex as a wedged one does, but it runs a task.
    with worker(tmp_path, env={"WORKFLOW_Q_WORKERS": "1"}), queued_for_the_worker:
        pause = Pause.objects.create(seconds=WEDGED_FOR + 5)
        done = lambda: Pause.objects.get(pk=pause.pk).state == "done"  # noqa: E731
        wait_for(done, WEDGED_FOR + 60, "the action")
        log = (tmp_path / "worker.log").read_text()
    assert "starting the cluster again" not in log
    assert not WorkAttempt.objects.filter(object_id=str(pause.pk)).exists()
