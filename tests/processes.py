"""Worker subprocesses for the tests: ``manage.py workflow_worker`` on the test database."""

import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

from django.db import connection, connections
from django.test import override_settings

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def worker(tmp_path, name="worker", *args, env=None):
    with spawned(tmp_path, name, args, env) as process:
        log = tmp_path / f"{name}.log"
        wait_for(lambda: started(tmp_path, name), 60, f"{name} to start:\n{log}")
        yield process


@contextmanager
def workers_at_once(tmp_path, *names):
    """Workers started together, as a deploy restarts them; yields once all are running."""
    with ExitStack() as stack:
        processes = [stack.enter_context(spawned(tmp_path, name)) for name in names]
        every_one = f"{', '.join(names)} to start"
        wait_for(lambda: all(started(tmp_path, name) for name in names), 60, every_one)
        yield processes


def started(tmp_path, name):
    return "running:" in (tmp_path / f"{name}.log").read_text()


@contextmanager
def spawned(tmp_path, name, args=(), env=None):
    log = tmp_path / f"{name}.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),
        **(env or {}),
    }
    connections.close_all()
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "django", "workflow_worker", *args],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, like a service
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def run_once(timeout=120):
    """``manage.py workflow_worker --once`` on the test database, to its end: its result."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),
    }
    connections.close_all()
    return subprocess.run(
        [sys.executable, "-m", "django", "workflow_worker", "--once"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


#: Tasks go to the broker for a worker process instead of running in the caller.
queued_for_the_worker = override_settings(DJANGO_WORKFLOW={"TASK_OPTIONS": {"sync": False}})


def quick_recovery(processes):
    """A worker's environment for crash tests: ``processes`` django-q2 processes, work a
    dead worker held back after 6 s, a stop's grace of 20 s."""
    return {
        "WORKFLOW_RECOVERY_AFTER": "6",
        "WORKFLOW_SHUTDOWN_GRACE": "20",
        "WORKFLOW_Q_WORKERS": str(processes),
    }
