"""Inside django-q2 worker processes started by ``workflow_worker``: a stop lets the
running task finish; the process names itself ``WORKER_NAME`` (what ``ps`` shows) and
says in a file of its own whether it runs a task (``STATES_VARIABLE``: how the
supervisor tells an idle worker from a busy one, and the workers from the pusher and
the monitor). The app connects these receivers to django-q2's signals."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any

from ..process import stopping
from ..reading.attempts_read import NODE_VARIABLE

_busy = threading.Event()

#: The name a django-q2 worker process of ``workflow_worker`` gives itself (at most 15
#: characters: Linux's ``/proc/<pid>/comm``).
WORKER_NAME = "workflow-worker"
#: The environment variable naming the folder where each worker process keeps its state
#: in a file named by its pid: ``idle`` or ``busy``.
STATES_VARIABLE = "DJANGO_WORKFLOW_WORKER_STATES"
IDLE, BUSY = "idle", "busy"


def _say_state(state: str) -> None:
    folder = os.environ.get(STATES_VARIABLE)
    if folder:
        with contextlib.suppress(OSError), open(os.path.join(folder, str(os.getpid())), "w") as f:
            f.write(state)


_parent: list[int] = []


def stop_gently(sender: Any = None, **kwargs: Any) -> None:
    """``post_spawn`` receiver: SIGTERM lets the running task finish instead of killing it.

    A stop (``workflow_worker`` stopping, or a whole process group told to
    stop by systemd or Kubernetes) reaches every django-q2 process: an idle
    worker exits at once, a busy one claims nothing more and exits after its
    task. ``workflow_worker`` kills what is left after ``SHUTDOWN_GRACE``.
    """
    if os.environ.get(NODE_VARIABLE):
        _parent[:] = [os.getppid()]
        signal.signal(signal.SIGTERM, _on_sigterm)
        # Linux only; elsewhere the name stays.
        with contextlib.suppress(OSError), open("/proc/self/comm", "w") as name:
            name.write(WORKER_NAME)
        _say_state(IDLE)


def _on_sigterm(signum: int, frame: Any) -> None:
    stopping.request()
    if not _busy.is_set():
        raise SystemExit(0)
    threading.Timer(1.0, _exit_unless_stopping).start()


def _exit_unless_stopping() -> None:
    # A stop ends the sentinel too. A sentinel still alive sent the SIGTERM itself: its
    # guard ends a worker stuck past its timeout, which must not outlive the signal.
    if _parent and os.getppid() == _parent[0]:
        os._exit(1)


def task_started(sender: Any = None, **kwargs: Any) -> None:
    _busy.set()
    _say_state(BUSY)


def task_finished(sender: Any = None, **kwargs: Any) -> None:
    _busy.clear()
    _say_state(IDLE)
    if stopping.requested():
        raise SystemExit(0)
