"""Hand-written baselines for benchmarks/throughput.py: the rows the engine writes, written
by a competent engineer with the driver alone (psycopg 3 prepared statements, optionally
pipelined; the sqlite3 module on SQLite), no Django on the path; ``DjangoAtomic`` runs the
same statements in Django's ``transaction.atomic()``, to show what that part costs.

Every loop claims its records from the records table itself (the table is the queue),
commits one record at a time, and writes exactly what the engine writes for it, as
listed by ``BENCH_SHOW_SQL=1``: the step, the entry instant (or the fired column and
``next_due_at``), and one log row with every column the engine's log INSERT names.
"""

import contextlib
import sqlite3
from datetime import UTC, datetime

import psycopg
from django.db import transaction

from django_workflow.engine.sql.cursors import prepare_when_asked

#: The log table's columns, in the order of the engine's own INSERT.
LOG_COLUMNS = (
    "content_type_id, object_id, from_state, to_state, transition_name, triggered_by, "
    "occurred_at, from_state_entered_at, actor_id, actor_repr, attempt, error, reverses_id, "
    "comment, data"
)
LOG_INSERT = (
    f"INSERT INTO django_workflow_transitionlog ({LOG_COLUMNS}) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, NULL, %s, %s, '', NULL, '', NULL)"
)


def now():
    return datetime.now(UTC)


class Driver:
    """One connection of the driver, and the few places the dialects differ."""

    def __init__(self, vendor, params):
        self.vendor = vendor
        if vendor == "postgresql":
            self.connection = psycopg.connect(**params)
        else:
            self.connection = sqlite3.connect(params["database"], isolation_level=None)
            self.connection.execute("PRAGMA journal_mode = WAL")
            self.connection.execute("PRAGMA synchronous = NORMAL")
            self.connection.execute("PRAGMA busy_timeout = 20000")

    def lock(self):
        return " FOR UPDATE SKIP LOCKED" if self.vendor == "postgresql" else ""

    def sql(self, text):
        return text if self.vendor == "postgresql" else text.replace("%s", "?")

    def stamp(self, instant):
        """An instant as the column stores it (SQLite: Django's text form, UTC)."""
        if self.vendor == "postgresql":
            return instant
        return instant.astimezone(UTC).replace(tzinfo=None).isoformat(" ")

    def begin(self, cursor):
        if self.vendor == "sqlite":  # psycopg begins on the first statement by itself
            cursor.execute("BEGIN IMMEDIATE")

    def commit(self, cursor):
        if self.vendor == "sqlite":
            cursor.execute("COMMIT")
        else:
            self.connection.commit()

    def cursor(self):
        return self.connection.cursor()

    def execute(self, cursor, text, params=()):
        if self.vendor == "postgresql":
            return cursor.execute(text, params, prepare=True)
        return cursor.execute(self.sql(text), params)

    def close(self):
        self.connection.close()


class DjangoAtomic(Driver):
    """The driver's statements on Django's own connection (prepared on PostgreSQL), each
    transaction a ``transaction.atomic()`` of Django's: what Django's transaction
    management costs the loop, with no engine around it."""

    def __init__(self, django_connection):
        django_connection.ensure_connection()
        self.vendor, self.django = django_connection.vendor, django_connection
        self.connection = django_connection.connection
        if self.vendor == "postgresql":
            prepare_when_asked(self.connection)
        self._atomic = None

    def cursor(self):
        """On PostgreSQL a server-binding cursor: Django's connection makes client-binding
        ones, which psycopg never prepares."""
        if self.vendor == "postgresql":
            return psycopg.Cursor(self.connection)
        return self.connection.cursor()

    def begin(self, cursor):
        self._atomic = transaction.atomic(using=self.django.alias)
        self._atomic.__enter__()

    def commit(self, cursor):
        self._atomic.__exit__(None, None, None)

    def close(self):
        """The connection is Django's: it stays open."""


ATTEMPTS = "django_workflow_workattempt"
#: The attempt row's columns as the engine writes a first attempt marked running.
ATTEMPT_COLUMNS = (
    "content_type_id, object_id, work, round_key, attempts, interruptions, retry_at, halted, "
    "last_error, holder, pid, running_since, seen_at, alive_until, updated_at"
)
ATTEMPT_VALUES = "0, 0, NULL, false, '', 'raw', 1, %s, %s, %s, %s"


def automatic_steps(driver, table, content_type, pipelined=False, paced=contextlib.nullcontext):
    """Run every record waiting in ``auto`` with the engine's writes and guarantees: read
    the step's records a hundred at a time (keys and entry instants, as the engine's run
    does); for each, claim it by marking its attempt running, committed before the action
    (``INSERT ... ON CONFLICT DO NOTHING RETURNING`` on the attempt row's unique key: a
    record another loop claimed is passed over); then lock it in that entry, the no-op
    action, move it to ``done``, log it, delete the attempt, commit. It stops when a
    chunk moves nothing. Pipelined: the claim in one block ending in a Sync, then the
    lock, and the writes with the commit, in another: three waits, of which libpq's
    trace counts two (the lock waits for its rows without a Sync). The writes are the
    engine's, each its own statement (the engine sends them as one). ``paced()`` is
    entered around each record (the worker's turns on SQLite)."""
    work = "'step:auto'"
    chunk = f"SELECT id, state_entered_at FROM {table} WHERE state = 'auto' LIMIT 100"
    claim = (
        f"INSERT INTO {ATTEMPTS} ({ATTEMPT_COLUMNS}) VALUES (%s, %s, {work}, %s, "
        f"{ATTEMPT_VALUES}) ON CONFLICT (content_type_id, object_id, work) DO NOTHING "
        "RETURNING object_id"
    )
    if driver.vendor == "sqlite":
        claim = claim.replace("false", "0")
    lock = f"SELECT * FROM {table} WHERE id = %s AND state = 'auto' AND state_entered_at = %s" + (
        " FOR UPDATE" if driver.vendor == "postgresql" else ""
    )
    update = f"UPDATE {table} SET state = 'done', state_entered_at = %s WHERE id = %s"
    forget = (
        f"DELETE FROM {ATTEMPTS} WHERE content_type_id = %s AND object_id = %s AND work = {work}"
    )

    # Pipelined, each block ends with a Sync: the claim commits on its own (autocommit),
    # and the writes after the lock go with the COMMIT.
    synced = driver.connection.pipeline if pipelined else contextlib.nullcontext

    def step(cursor, pk, entered):
        key = str(pk)
        at = driver.stamp(now())
        lease = driver.stamp(now().replace(year=now().year + 1))
        with synced():  # read after the Sync: one round trip
            driver.execute(cursor, claim, (content_type, key, entered, at, at, lease, at))
        if cursor.fetchone() is None:
            return False
        with synced():
            cursor.execute("BEGIN IMMEDIATE" if driver.vendor == "sqlite" else "BEGIN")
            driver.execute(cursor, lock, (pk, entered)).fetchone()
            at = driver.stamp(now())
            driver.execute(cursor, update, (at, pk))
            log = (content_type, key, "auto", "done", "work", "automatic", at, entered, "", 1)
            driver.execute(cursor, LOG_INSERT, log)
            driver.execute(cursor, forget, (content_type, key))
            cursor.execute("COMMIT")
        return True

    if driver.vendor == "postgresql":
        driver.connection.autocommit = True
    cursor, moved = driver.cursor(), 0
    while True:
        rows = driver.execute(cursor, chunk).fetchall()
        done = 0
        for pk, entered in rows:
            with paced():
                done += step(cursor, pk, entered)
        moved += done
        if not done:
            return moved


def action_timeouts(
    driver, table, content_type, due_by, pipelined=False, paced=contextlib.nullcontext
):
    """Fire every action timeout due by ``due_by``: lock one due record (``SKIP LOCKED``,
    returning the columns needed), the no-op action, set its fired column and clear
    ``next_due_at``, log it, commit. Pipelined: the writes after the action and the
    commit go in one round trip. ``paced()`` is entered around each record."""
    claim = (
        f"SELECT id, state, state_entered_at FROM {table} WHERE next_due_at <= %s "
        f"ORDER BY next_due_at LIMIT 1{driver.lock()}"
    )
    update = f"UPDATE {table} SET waiting_remind_fired_at = %s, next_due_at = NULL WHERE id = %s"
    due_by = driver.stamp(due_by)

    def fire(cursor):
        with paced():
            return fire_one(cursor)

    def fire_one(cursor):
        driver.begin(cursor)
        row = driver.execute(cursor, claim, (due_by,)).fetchone()
        if row is None:
            driver.commit(cursor)
            return False
        pk, state, entered = row
        at = driver.stamp(now())
        driver.execute(cursor, update, (due_by, pk))
        log = (content_type, str(pk), state, state, "remind", "timeout", at, entered, "", None)
        driver.execute(cursor, LOG_INSERT, log)
        driver.commit(cursor)
        return True

    return _drain(driver, fire, pipelined)


def manual_transitions(driver, table, content_type, pk, count, pipelined=False):
    """``count`` manual transitions of one record between ``open`` and ``closed``: the
    conditional UPDATE (guarded by the step the caller saw), the log row, commit.
    Pipelined: all three in one round trip."""
    update = f"UPDATE {table} SET state = %s, state_entered_at = %s WHERE id = %s AND state = %s"
    cursor = driver.cursor()
    state, entered = "open", None
    names = {"open": ("flip", "closed"), "closed": ("flop", "open")}

    def one():
        nonlocal state, entered
        name, target = names[state]
        at = driver.stamp(now())
        driver.begin(cursor)
        driver.execute(cursor, update, (target, at, pk, state))
        log = (content_type, str(pk), state, target, name, "manual", at, entered, "bench", None)
        driver.execute(cursor, LOG_INSERT, log)
        driver.commit(cursor)
        state, entered = target, at

    if pipelined:
        with driver.connection.pipeline():
            for _ in range(count):
                one()
    else:
        for _ in range(count):
            one()
    return count


def _drain(driver, one, pipelined):
    """Call ``one(cursor)`` until it finds nothing; returns how many it handled."""
    cursor = driver.cursor()
    handled = 0
    if pipelined:
        with driver.connection.pipeline():
            while one(cursor):
                handled += 1
    else:
        while one(cursor):
            handled += 1
    return handled
