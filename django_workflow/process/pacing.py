"""Taking turns on SQLite's one write lock: the worker's processes pause together.

SQLite lets one connection write at a time; another writer (a web request)
waits in SQLite's busy handler, which retries after 1, 3, 8, 18, 33, 53, 78,
103 and 128 ms (never more than 25 ms apart until then), at 178 and 228 ms,
then every 100 ms. A worker whose processes write back to back keeps winning
that race. So on SQLite each record the worker works on (a record of an
automatic step's run, an on-enter effect, a record fired by a poll, a batch of the start-up
recompute) is a turn taken through a lock file beside the database: one turn
of any of the worker's processes at a time, as SQLite would have it anyway.
Once turns have followed each other for ``BURST`` without a break, the next
one waits until the lock has been left alone longer than the busy handler's
retry interval for a writer that began waiting at the last break every waiting
writer had a retry in, so that writer gets its turn in the pause. The worker's
other writes (django-q2's, its lease and heartbeats) take SQLite's lock in a turn
too (``pace_every_write``), so none of them takes it in a pause.
"""

from __future__ import annotations

import functools
import os
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections
from django.db.backends.signals import connection_created

try:
    import fcntl
except ImportError:  # Windows: the processes pace themselves each, unaware of the others
    fcntl = None  # type: ignore[assignment]

BURST = 0.025
#: SQLite's busy handler retries a writer that has waited up to 128 ms at most 25 ms
#: later, up to 228 ms at most 50 ms later, and every 100 ms after that.
RETRIES = ((0.128, 0.025), (0.228, 0.05), (float("inf"), 0.1))
#: A pause outlasts the retry interval by this much: django-q2's own short writes (taking
#: a task, saving its result) land in the pause too.
SLACK = 0.015
#: How often a process waiting for its turn looks again.
POLL = 0.002
#: The lock file's content: when the current burst began, when the last turn ended, and
#: since when a writer may have waited without a retry in a pause, and whether the last
#: turn left a transaction open (see ``turn``).
_STATE = struct.Struct("dddd")

_files: dict[tuple[int, str], int] = {}
_threads: dict[str, threading.Lock] = {}
_opening = threading.Lock()
_held = threading.local()


def _fresh_locks_in_child() -> None:
    """A process forked while another of its threads held a turn's lock (the worker
    starting a django-q2 cluster again beside its heartbeat and timeline) inherits the
    lock held, by a thread it does not have: it would wait for it for good."""
    global _opening
    _threads.clear()
    _opening = threading.Lock()
    _held.__dict__.clear()


os.register_at_fork(after_in_child=_fresh_locks_in_child)


def paced(database: Callable[..., str]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Run the decorated task in a turn of the database ``database(*args)`` names."""

    def decorate(task: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(task)
        def in_turn(*args: Any, **kwargs: Any) -> Any:
            with turn(database(*args, **kwargs)):
                return task(*args, **kwargs)

        return in_turn

    return decorate


@contextmanager
def turn(db: str, *, leaves_open: bool = False) -> Iterator[None]:
    """Hold the worker's turn to write to ``db`` (SQLite only: elsewhere, at once);
    ``leaves_open``: the turn begins a transaction that goes on past it."""
    path = _lock_path(db)
    held = _held.__dict__.setdefault("paths", set())
    if path is None or path in held:  # a task run inside a task (sync): one turn
        yield
        return
    with _threads.setdefault(path, threading.Lock()), _locked(path, _busy_timeout(db)) as fd:
        began, ended, since, open_after = _read(fd)
        now = time.time()
        # A pause is sized for a writer waiting ``since`` the last break every waiting
        # writer had a retry in. A transaction left open by the last turn held the lock
        # after it: neither the time since nor the pause that follows is such a break
        # for a writer that began waiting in it, so ``since`` stays for the next pause.
        pause = pause_for(ended - since)
        if not open_after and not 0 <= now - ended < pause:  # others had their break
            began = since = now
        elif now - began >= BURST:
            time.sleep(max(0.0, ended + pause - now))
            began = time.time()
            if not open_after:
                since = began
        held.add(path)
        try:
            yield
        finally:
            held.discard(path)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, _STATE.pack(began, time.time(), since, leaves_open))


def pace_every_write() -> None:
    """In a worker process: every write on SQLite outside a turn (django-q2's broker and
    monitor, the worker's lease and heartbeats, queueing a run) takes the lock in a turn,
    after the turn in progress and its pause, so it never takes it in a pause."""
    connection_created.connect(_between_turns_from_now_on, dispatch_uid=__name__)
    for connection in connections.all(initialized_only=True):
        _between_turns_from_now_on(type(connection), connection)


def _between_turns_from_now_on(sender: Any, connection: Any, **kwargs: Any) -> None:
    if connection.vendor == "sqlite" and between_turns not in connection.execute_wrappers:
        connection.execute_wrappers.append(between_turns)


#: The statements that take SQLite's write lock outside a transaction, or begin one.
_WRITES = ("BEGIN", "INSERT", "UPDATE", "DELETE", "REPLACE")


def between_turns(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    """A write, or a transaction's ``BEGIN``, takes SQLite's lock in a turn: waiting in
    SQLite's busy handler instead, it would take the lock in the next turn's pause. The
    transaction goes on past the turn (which would otherwise have to last to its end);
    the next turn waits for its ``COMMIT``, before that turn's pause."""
    connection = context["connection"]
    if connection.in_atomic_block or not sql.lstrip()[:7].upper().startswith(_WRITES):
        return execute(sql, params, many, context)
    with turn(connection.alias, leaves_open=sql.lstrip()[:5].upper() == "BEGIN"):
        return execute(sql, params, many, context)


def pause_for(waited: float) -> float:
    """How long to leave the lock alone so that a writer that has ``waited`` since the
    burst began retries within the pause."""
    return next(interval for upto, interval in RETRIES if waited < upto) + SLACK


def _read(fd: int) -> tuple[float, float, float, float]:
    os.lseek(fd, 0, os.SEEK_SET)
    return _STATE.unpack(os.read(fd, _STATE.size).ljust(_STATE.size, b"\0"))


def _busy_timeout(db: str) -> float:
    """How long SQLite's busy handler of ``db`` waits for the lock (Python's default: 5 s)."""
    return float(connections[db].settings_dict.get("OPTIONS", {}).get("timeout", 5))


def _lock_path(db: str) -> str | None:
    """The lock file beside an SQLite database file; ``None`` for other databases."""
    connection = connections[db]
    if connection.vendor != "sqlite":
        return None
    name = str(connection.settings_dict["NAME"])
    if connection.is_in_memory_db() or name.startswith("file:"):
        return f"memory:{db}"  # one process: its threads take turns
    return f"{name}-workflow-turns"


@contextmanager
def _locked(path: str, waiting: float) -> Iterator[int]:
    """An exclusive lock on the file ``path``, by this process's own descriptor (a forked
    process shares its parent's descriptors, and with them their ``flock``)."""
    key = (os.getpid(), path)
    with _opening:
        if key not in _files:
            _files[key] = _open(path)
        fd = _files[key]
    shared = fcntl is not None and not path.startswith("memory:") and _lock(fd, waiting)
    try:
        yield fd
    finally:
        if shared:
            fcntl.flock(fd, fcntl.LOCK_UN)


def _lock(fd: int, waiting: float) -> bool:
    """Wait up to ``waiting`` seconds for the lock; past that the task goes on without it
    (to SQLite's busy handler, which gives up after as long), as it would without pacing."""
    deadline = time.monotonic() + waiting
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL)


def _open(path: str) -> int:
    if path.startswith("memory:"):
        # The file object must outlive the dup: dropped first, it closes its descriptor.
        with tempfile.TemporaryFile() as scratch:
            return os.dup(scratch.fileno())
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
