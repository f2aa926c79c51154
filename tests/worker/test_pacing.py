"""On SQLite the worker's processes take turns to write, and pause together after a burst
so another writer gets its turn (docs/worker.md)."""

import multiprocessing
import os
import time

import pytest
from django.db import connection, connections
from django.db.backends.signals import connection_created
from django.db.backends.utils import CursorWrapper

from django_workflow.engine.sql.cursors import hot_cursor
from django_workflow.process import pacing
from tests.testapp.models import Ticket

on_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's one writer")


def hold_a_turn(seconds, started):
    with pacing.turn("default"):
        started.set()
        time.sleep(seconds)


@on_sqlite
def test_a_turn_waits_for_the_turn_another_process_holds():
    context = multiprocessing.get_context("fork")
    started = context.Event()
    other = context.Process(target=hold_a_turn, args=(0.5, started))
    other.start()
    assert started.wait(30)
    began = time.monotonic()
    with pacing.turn("default"):
        waited = time.monotonic() - began
    other.join()
    assert 0.3 < waited < 5


@on_sqlite
def test_after_a_burst_the_next_turn_leaves_the_lock_alone_past_a_writers_retry(monkeypatch):
    monkeypatch.setattr(pacing, "BURST", 0)  # every turn ends a burst
    with pacing.turn("default"):
        time.sleep(0.15)  # a writer that began waiting now retries 50 ms apart
    began = time.monotonic()
    with pacing.turn("default"):
        waited = time.monotonic() - began
    assert waited >= 0.05


@on_sqlite
def test_a_writer_waiting_in_a_transaction_a_turn_left_open_gets_a_pause_long_enough(
    monkeypatch,
):
    monkeypatch.setattr(pacing, "BURST", 0)
    with pacing.turn("default", leaves_open=True):
        pass  # a BEGIN outside the turns: its transaction holds the lock 150 ms more
    time.sleep(0.15)
    with pacing.turn("default"):
        time.sleep(0.1)  # a writer waiting since the BEGIN now retries 100 ms apart
    began = time.monotonic()
    with pacing.turn("default"):
        waited = time.monotonic() - began
    assert waited >= 0.1


@pytest.fixture
def every_write_paced():
    pacing.pace_every_write()
    yield
    connection_created.disconnect(dispatch_uid=pacing.__name__)
    connection.execute_wrappers.remove(pacing.between_turns)


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_write_outside_a_turn_leaves_the_pause_after_a_burst_alone(
    monkeypatch, every_write_paced
):
    """django-q2's broker writes between turns too: in a pause it would take the lock a
    waiting writer's retry was due to find free."""
    monkeypatch.setattr(pacing, "BURST", 0)
    with pacing.turn("default"):
        time.sleep(0.15)  # a writer that began waiting now retries 50 ms apart
    began = time.monotonic()
    Ticket.objects.create()
    waited = time.monotonic() - began
    assert waited >= 0.05


def engine_write_after_a_burst(monkeypatch, settings):
    """Seconds an engine statement's write waited, sent after a burst of 150 ms, and its
    cursor; nothing captures queries, so the light cursor is used."""
    settings.DEBUG = False
    monkeypatch.setattr(pacing, "BURST", 0)
    with pacing.turn("default"):
        time.sleep(0.15)  # a writer that began waiting now retries 50 ms apart
    began = time.monotonic()
    with hot_cursor("default") as cursor:
        cursor.execute(f"DELETE FROM {Ticket._meta.db_table} WHERE id = %s", [-1])
    return time.monotonic() - began, cursor


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_an_engine_write_outside_a_turn_leaves_the_pause_after_a_burst_alone(
    monkeypatch, every_write_paced, settings
):
    """The engine's statements skip Django's cursor, not the worker's turns."""
    waited, cursor = engine_write_after_a_burst(monkeypatch, settings)
    assert waited >= 0.05
    assert not isinstance(cursor, CursorWrapper)


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_outside_the_worker_an_engine_write_takes_no_turn(monkeypatch, settings):
    waited, _ = engine_write_after_a_burst(monkeypatch, settings)
    assert waited < 0.05


@on_sqlite
def test_within_a_burst_turns_follow_each_other_at_once():
    with pacing.turn("default"):
        pass
    began = time.monotonic()
    with pacing.turn("default"):
        waited = time.monotonic() - began
    assert waited < pacing.SLACK


def test_a_task_run_inside_a_task_shares_its_turn(monkeypatch):
    monkeypatch.setattr(pacing, "BURST", 0)
    with pacing.turn("default"):
        began = time.monotonic()
        with pacing.turn("default"):  # a synchronous task queued by the first
            waited = time.monotonic() - began
    assert waited < pacing.SLACK


@pytest.mark.skipif(connection.vendor == "sqlite", reason="PostgreSQL locks rows")
def test_on_postgresql_turns_never_wait(monkeypatch):
    monkeypatch.setattr(pacing, "BURST", 0)
    began = time.monotonic()
    for _ in range(3):
        with pacing.turn("default"):
            time.sleep(0.05)
    assert time.monotonic() - began < 0.15 + pacing.SLACK


@pytest.fixture
def in_memory_alias():
    """A database alias on an in-memory SQLite database, as pytest-django's default test
    database is: its turns are the process's own, kept beside no file."""
    alias = "pacing-in-memory"
    declared = {**connections.settings, alias: {"ENGINE": "django.db.backends.sqlite3"}}
    declared[alias]["NAME"] = ":memory:"
    connections.settings[alias] = connections.configure_settings(declared)[alias]
    try:
        yield alias
    finally:
        connections[alias].close()
        del connections[alias]
        del connections.settings[alias]


def test_an_in_memory_database_takes_its_turns_in_the_process(in_memory_alias):
    # Every automatic step failed to queue under pytest-django's defaults: the scratch
    # file behind an in-memory database's turns was closed before it was duplicated.
    assert connections[in_memory_alias].is_in_memory_db()
    for _ in range(2):
        with pacing.turn(in_memory_alias):
            pass
    with pacing.turn(in_memory_alias):
        began = time.time()
    fd = pacing._files[(os.getpid(), f"memory:{in_memory_alias}")]
    os.lseek(fd, 0, os.SEEK_SET)
    _began, ended, _since, _open = pacing._STATE.unpack(os.read(fd, pacing._STATE.size))
    assert ended >= began
