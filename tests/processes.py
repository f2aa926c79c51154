"""Worker subprocesses for the tests: ``manage.py workflow_worker`` on the test database."""

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from django.db import connection, connections

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def worker(tmp_path, name="worker", *args, env=None):
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
        wait_for(lambda: "running:" in log.read_text(), 60, f"{name} to start:\n{log}")
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
