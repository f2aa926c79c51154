"""What ``workflow_worker`` runs: django-q2 clusters, the heartbeat, the timeline, and a stop.

On SIGTERM or Ctrl-C the worker claims nothing more and lets running tasks
finish for up to ``SHUTDOWN_GRACE`` seconds. What still runs then is killed
and its attempts are released for another worker: a stop spends no attempt.
A SIGTERM sent to the whole process group (systemd, Kubernetes) reaches the
django-q2 processes too; they finish their task the same way, and the exit
code is 0 all the same.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.db import connections

from ..conf import workflow_settings
from ..engine.leases import process_alive
from ..process import stopping
from ..reading.attempts_read import NODE_VARIABLE
from .recovery import Heartbeat, hand_over
from .schedulers import kick_off, loops
from .stop_signals import IDLE, STATES_VARIABLE

PR_SET_CHILD_SUBREAPER = 36
STOPS = (signal.SIGTERM, signal.SIGINT)
#: Seconds a cluster may look wedged (``wedged``) before it is built again.
WEDGED_FOR = 10


class Supervisor:
    """Runs the clusters of ``queues`` and the timeline until told to stop."""

    def __init__(self, queues: list[str], works: list[Any], timeline: bool, say: Callable) -> None:
        self.queues = queues
        self.works = works
        self.loops = loops(works) if timeline else {}  # each scheduler's, by thread name
        self.say = say
        self.node = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.stop = threading.Event()
        self.healthy = True
        self.wedged: dict[int, int] = {}  # sentinel pid -> seconds it has looked wedged
        self.states = tempfile.mkdtemp(prefix="workflow-workers-")  # see ``wedged``
        self._handle_stops()  # from here on, the clusters' start included, a stop is a stop

    def run(self) -> bool:
        """Run until SIGTERM or Ctrl-C; return whether every cluster stayed healthy."""
        from django_q.brokers import get_broker
        from django_q.cluster import Cluster

        os.environ[NODE_VARIABLE] = self.node  # inherited by the forked django-q2 processes
        os.environ[STATES_VARIABLE] = self.states
        _adopt_orphans()
        # Each Cluster() installs django-q2's own handlers, which cannot stop a cluster not
        # yet started: held back while they are built, then ours again.
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        try:
            clusters = [Cluster(get_broker(queue)) for queue in self.queues]
            self._handle_stops()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        clusters = self._start(clusters)
        if not self.stop.is_set():
            kick_off(self.works, self.queues)  # the first polls: now, not ~30 s in
        heartbeat = Heartbeat(self.node)
        heartbeat.start()
        timelines = [
            threading.Thread(target=loop, args=(self.stop,), name=name)
            for name, loop in self.loops.items()
        ]
        for thread in timelines:
            thread.start()
        self.say(
            f"running: queues {', '.join(self.queues)}; timeline {'on' if timelines else 'off'}"
        )
        while not self.stop.wait(1):
            self._watch(clusters)
            clusters = self._unwedge(clusters)
        stopping.request()
        # The grace starts now: on SQLite the timeline's last write may wait for a running action.
        self._shut_down(clusters)
        # Stopped before the hand-over: a beat that read the attempts while their process
        # still ran would otherwise renew a lease the hand-over has just ended.
        heartbeat.stop()
        released = hand_over(self.node)
        if released:
            self.say(f"released {released} unfinished attempt(s) for another worker")
        for thread in timelines:
            thread.join()
        shutil.rmtree(self.states, ignore_errors=True)
        return self.healthy

    def _handle_stops(self) -> None:
        for signum in STOPS:
            signal.signal(signum, lambda *_: self.stop.set())

    def _start(self, clusters: list[Any]) -> list[Any]:
        """Start the clusters until told to stop; the ones started.

        A process-group stop during a start reaches its sentinel before it is up:
        django-q2 then says it failed to start, which is the stop, not a failure.
        """
        started = []
        for cluster in clusters:
            if self.stop.is_set():
                break
            connections.close_all()  # forked cluster processes must not share our connections
            try:
                cluster.start()
            except RuntimeError:
                if not self.stop.is_set():
                    raise
            started.append(cluster)
        return started

    def _watch(self, clusters: list[Any]) -> None:
        for cluster in clusters:
            if cluster.sentinel.is_alive():
                continue
            if cluster.sentinel.exitcode == -signal.SIGTERM:  # the process group was told to stop
                self.stop.set()
            else:
                self.say(f"a django-q2 cluster stopped unexpectedly ({cluster.sentinel.exitcode})")
                self.healthy = False
                self.stop.set()

    def _unwedge(self, clusters: list[Any]) -> list[Any]:
        """Build again a cluster whose processes have all waited on a lock for
        ``WEDGED_FOR`` s (``wedged``): its queue takes no task any more. The database's
        leases make it safe: what its killed processes held expires and runs again."""
        kept = []
        for cluster in clusters:
            pid = cluster.sentinel.pid
            looked = self.wedged.get(pid, 0) + 1 if wedged(pid, self.states) else 0
            self.wedged[pid] = looked
            if looked < WEDGED_FOR or self.stop.is_set():
                kept.append(cluster)
                continue
            self.say(
                f"queue {cluster.broker.list_key}: every django-q2 process has waited on a "
                f"lock for {WEDGED_FOR} s (one killed while it waited for a task takes the "
                "queue's lock with it); starting the cluster again"
            )
            self._end(cluster, grace=1.0)
            del self.wedged[pid]
            kept.extend(self._start([self._built(cluster.broker.list_key)]))
            self._queue_again(cluster.broker.list_key)
        return kept

    def _queue_again(self, queue: str) -> None:
        """What the wedged cluster had taken from the broker went with it: its polls now,
        and a run of each of its automatic steps (a run takes whatever waits in the step;
        the records' claims keep each attempt to one)."""
        from django.apps import apps

        from ..work import StepWork
        from .transport import enqueue_steps

        works = [work for work in self.works if work.queue == queue]
        kick_off(works, self.queues)
        for work in works:
            if isinstance(work, StepWork):
                enqueue_steps(apps.get_model(work.model_label), work.step)

    def _built(self, queue: str) -> Any:
        from django_q.brokers import get_broker
        from django_q.cluster import Cluster

        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        try:
            cluster = Cluster(get_broker(queue))
            self._handle_stops()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        return cluster

    def _end(self, cluster: Any, grace: float) -> None:
        """Stop one cluster's processes: SIGTERM, then SIGKILL past ``grace`` seconds."""
        sentinel = {cluster.sentinel.pid}
        for pid in [*_descendants(sentinel, under=cluster.sentinel.pid), *sentinel]:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _descendants(sentinel, under=cluster.sentinel.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in [*_descendants(sentinel, under=cluster.sentinel.pid), *sentinel]:
            _signal(pid, signal.SIGKILL)
        cluster.sentinel.join(timeout=5)

    def _shut_down(self, clusters: list[Any]) -> None:
        """Let running tasks finish within the grace; kill what is left.

        Every django-q2 process gets SIGTERM, as from a process-group stop: the
        sentinels, pushers and monitors end at once, so nothing new is pulled
        from the broker; an idle worker exits, a busy one after its task.
        """
        grace = workflow_settings.SHUTDOWN_GRACE
        self.say(f"stopping: running tasks may finish for {grace} s")
        sentinels = {cluster.sentinel.pid for cluster in clusters}
        for pid in _descendants(sentinels):
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _descendants(sentinels) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _descendants(sentinels)
        for pid in left:
            _signal(pid, signal.SIGKILL)
        if left:
            self.say(f"killed {len(left)} process(es) still running after {grace} s")
        for cluster in clusters:
            cluster.sentinel.join(timeout=5)


def _adopt_orphans() -> None:
    """Linux: processes orphaned by a dead sentinel become ours, so the grace can wait for them."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def wedged(sentinel: int, states: str) -> bool:
    """Whether a django-q2 cluster takes no task any more: every worker is idle (runs no
    task, says its file in the folder ``states``) and waits on a lock, none on the task
    queue's pipe. An idle cluster has one worker reading the pipe, holding the queue's
    read lock; a worker killed while it held the lock takes it with it, and the others
    (and the one the sentinel starts in its place) wait for it for good. A busy worker
    whose action waits on a lock of its own is no sign (Linux: ``/proc``; elsewhere
    never wedged)."""
    workers = [pid for pid in _descendants({sentinel}, under=sentinel) if _state(states, pid)]
    idle = all(_state(states, pid) == IDLE for pid in workers)
    waits = [_proc(pid, "wchan") for pid in workers]
    return bool(workers) and idle and all("futex" in wait for wait in waits)


def _state(states: str, pid: int) -> str:
    """What worker ``pid`` says it does (``IDLE``, ``BUSY``), ``""`` for no worker."""
    try:
        with open(os.path.join(states, str(pid))) as said:
            return said.read()
    except OSError:
        return ""


def _proc(pid: int, what: str) -> str:
    """``/proc/<pid>/<what>`` (``comm``: its name; ``wchan``: what it waits on), or ``""``."""
    try:
        with open(f"/proc/{pid}/{what}") as found:
            return found.read()
    except OSError:
        return ""


def _descendants(sentinels: set[int], under: int | None = None) -> list[int]:
    """Every live process below this one (or below ``under``); adopted orphans that ended
    are reaped on the way."""
    children: dict[int, list[int]] = {}
    try:
        entries = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return [pid for pid in sentinels if process_alive(pid)]
    for name in entries:
        try:
            with open(f"/proc/{name}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, frontier = [], [os.getpid() if under is None else under]
    while frontier:
        for pid in children.get(frontier.pop(), []):
            if pid not in sentinels and _reaped(pid):
                continue
            if process_alive(pid):
                found.append(pid)
            frontier.append(pid)
    return found


def _reaped(pid: int) -> bool:
    """Reap an adopted orphan that has ended (multiprocessing reaps the sentinels itself)."""
    try:
        done, _status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == pid


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)
