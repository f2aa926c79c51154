"""Firing action timeouts through ``poll``: against a hand-written per-record transaction,
and business days against calendar days.

What it measures, on ``BENCH_ROWS``-row tables (default 1,000,000) built as
in ``benchmarks/deadlines.py`` (now is the Tuesday after the holidays; rows
over eight steps, hundreds of thousands fired this round, nothing due), into
which ``BENCH_DUE`` records (default 10,000) are made due: their fired column
cleared through the workflow queryset's ``update()``, so the engine computes
their ``next_due_at``. Each side fires them all; the rows are then put back
(fired columns and ``next_due_at`` restored from a saved copy, the log
emptied, the table vacuumed) before the next side. Sides alternate per round.

- ``poll 2d``: ``polling.poll(label, works, now=NOW)`` on the calendar model
  (``fire_after="2d"``, no-op action, log on): the index read in batches,
  ``due_at`` per record, then per record a transaction: row lock, action,
  ``save()`` of the fired column and ``next_due_at``, log row;
- ``hand-written``: per record BEGIN; ``SELECT id, state … WHERE next_due_at
  <= now ORDER BY next_due_at LIMIT 1 FOR UPDATE SKIP LOCKED``; the no-op
  method; ``UPDATE`` the fired column and ``next_due_at``; ``INSERT`` the log
  row; COMMIT (SQLite: no row lock, it has one writer);
- ``poll 2bd``: ``poll`` on the business-day model (``fire_after="2bd"``,
  Zagreb time, holidays);
- ``hand, paced`` (SQLite only): the hand-written loop pausing as the worker
  does on SQLite (``pacing.turn``), so the other writer gets the same turns
  beside both; the ratio against it is the like-for-like one there.

Targets: poll 2d >= 0.5x hand-written; poll 2bd >= 0.5x poll 2d. While a side
fires, another connection updates an unrelated row every millisecond; its
longest wait is printed. PostgreSQL, then SQLite with ``BENCH_SQLITE_DUE``
(default 2,000) due records (its worker pauses to let other writers in).

    make bench BENCHMARKS=benchmarks/actions.py
"""

import os
import sys
import threading
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("actions")

import django

django.setup()

from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connections, transaction
from django.utils import timezone

from benchmarks import common
from benchmarks.benchapp.models import Bystander, KindBusiness, KindCalendar
from django_workflow.models import TransitionLog
from django_workflow.process.pacing import turn
from django_workflow.worker.schedulers.polling import poll

DUE = int(os.environ.get("BENCH_DUE", 10_000))
SQLITE_DUE = int(os.environ.get("BENCH_SQLITE_DUE", 2_000))
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")
LOG = TransitionLog._meta.db_table


def fired_columns(model):
    return [work.fired_field for works in model.workflow.deadline_works.values() for work in works]


def make_due(model, alias, count):
    """Clear the fired column of ``count`` fired rows spread over the table, through the
    workflow queryset (the engine computes their next_due_at); save them as they are due."""
    connection = connections[alias]
    table, columns = model._meta.db_table, fired_columns(model)
    fired = " OR ".join(f"{column} IS NOT NULL" for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} WHERE {fired} ORDER BY id")
        keys = [row[0] for row in cursor.fetchall()]
    step = len(keys) // count
    assert step >= 1, f"{model.__name__}: only {len(keys)} fired rows"
    chosen = keys[::step][:count]
    rows = model.objects.using(alias).filter(pk__in=chosen)
    rows.update(**dict.fromkeys(columns))
    due = model._base_manager.using(alias).filter(next_due_at__lte=common.NOW).count()
    assert due == count, f"{model.__name__}: {due} due, wanted {count}"
    saved = f"saved_{table}"
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {saved}")
        cursor.execute(
            f"CREATE TABLE {saved} AS SELECT id, {', '.join(columns)}, next_due_at "
            f"FROM {table} WHERE next_due_at <= %s",
            [connection.ops.adapt_datetimefield_value(common.NOW)],
        )

    def put_back():
        assignments = ", ".join(f"{c} = s.{c}" for c in [*columns, "next_due_at"])
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET {assignments} FROM {saved} s WHERE {table}.id = s.id"
            )
            cursor.execute(f"DELETE FROM {LOG}")
            cursor.execute(f"VACUUM {table}" if connection.vendor == "postgresql" else "SELECT 1")

    return put_back


def poll_side(model, count):
    label, names = model._meta.label, [work.name for work in model.workflow.works]

    def fire():
        fired = sum(poll(label, names, now=common.NOW).values())
        assert fired == count, f"poll fired {fired} of {count}"
        return fired

    return fire


def hand_side(model, alias, count, paced=False):
    """The hand loop; ``paced``: taking turns as the worker does on SQLite (``pacing.turn``),
    so that the other writer gets its turns alike."""
    connection = connections[alias]
    table = model._meta.db_table
    lock = " FOR UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    select = (
        f"SELECT id, state FROM {table} WHERE next_due_at <= %s ORDER BY next_due_at LIMIT 1{lock}"
    )
    update = f"UPDATE {table} SET {{}} = %s, next_due_at = NULL WHERE id = %s"
    insert = (
        f"INSERT INTO {LOG} (content_type_id, object_id, from_state, to_state, "
        "transition_name, triggered_by, occurred_at, actor_repr, error, comment) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, '', '', '')"
    )
    content_type = ContentType.objects.db_manager(alias).get_for_model(model).pk
    ops = connection.ops
    now = ops.adapt_datetimefield_value(common.NOW)
    instance = model()

    def fire():
        fired = 0
        while True:
            with (
                turn(alias) if paced else nullcontext(),
                transaction.atomic(using=alias),
                connection.cursor() as cursor,
            ):
                cursor.execute(select, [now])
                row = cursor.fetchone()
                if row is None:
                    break
                pk, state = row
                instance.remind()
                cursor.execute(update.format(f"{state}_remind_fired_at"), [now, pk])
                at = ops.adapt_datetimefield_value(timezone.now())
                cursor.execute(
                    insert, [content_type, str(pk), state, state, "remind", "timeout", at]
                )
            fired += 1
        assert fired == count, f"hand-written fired {fired} of {count}"
        return fired

    return fire


class Bystanding:
    """Another connection writing an unrelated row while a side fires."""

    def __init__(self, alias):
        self.alias, self.longest, self.stop = alias, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._run)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def _run(self):
        rows = Bystander.objects.using(self.alias)
        try:
            writes = 0
            while not self.stop.is_set():
                started = time.perf_counter()
                with transaction.atomic(using=self.alias):
                    rows.update(touched=writes)
                self.longest = max(self.longest, time.perf_counter() - started)
                writes += 1
                time.sleep(0.001)
        finally:
            connections[self.alias].close()


def timed(fire, alias, waits, label):
    def run():
        with Bystanding(alias) as bystander:
            started = time.perf_counter()
            fired = fire()
            elapsed = time.perf_counter() - started
        waits[label].append(bystander.longest)
        return fired / elapsed

    return run


def run(alias, due):
    common.use(alias)
    call_command("migrate", database=alias, verbosity=0)
    vendor = connections[alias].vendor
    Bystander.objects.using(alias).all().delete()
    Bystander.objects.using(alias).create()
    put_back = {}
    for model in (KindCalendar, KindBusiness):
        seconds = common.load(model, alias, common.ROWS)
        checked = common.verify(model, alias, common.ROWS)
        put_back[model] = make_due(model, alias, due)
        print(
            f"{vendor} {model.__name__}: {common.ROWS:,} rows in {seconds:.0f} s, {checked} "
            f"checked, {due:,} made due"
        )
        print(f"  rows: {common.census(model, alias, common.ROWS)}")
    sides = {
        "poll 2d": (poll_side(KindCalendar, due), KindCalendar),
        "hand-written": (hand_side(KindCalendar, alias, due), KindCalendar),
        **(
            {"hand, paced": (hand_side(KindCalendar, alias, due, paced=True), KindCalendar)}
            if vendor == "sqlite"
            else {}
        ),
        "poll 2bd": (poll_side(KindBusiness, due), KindBusiness),
    }
    waits = {label: [] for label in sides}
    rates = common.alternate(
        {label: timed(fire, alias, waits, label) for label, (fire, _) in sides.items()},
        between=lambda label: put_back[sides[label][1]](),
    )
    print()
    print(
        f"{vendor}: {due:,} due action timeouts among {common.ROWS:,} rows, records/s, "
        f"median [min-max] of {common.ROUNDS} rounds; other writer's longest wait, ms"
    )
    for label in sides:
        print(
            f"  {label:<14}{common.spread(rates[label], 1, 0):>26}   "
            f"wait {common.spread(waits[label], 1000)}"
        )
    ratio = common.med(rates["poll 2d"]) / common.med(rates["hand-written"])
    print(f"  poll 2d / hand-written {ratio:5.2f}   target >= 0.50  {common.verdict(ratio >= 0.5)}")
    if "hand, paced" in rates:  # the same turns for the other writer on both sides
        ratio = common.med(rates["poll 2d"]) / common.med(rates["hand, paced"])
        mark = common.verdict(ratio >= 0.5)
        print(f"  poll 2d / hand, paced  {ratio:5.2f}   target >= 0.50  {mark}")
    ratio = common.med(rates["poll 2bd"]) / common.med(rates["poll 2d"])
    print(f"  poll 2bd / poll 2d     {ratio:5.2f}   target >= 0.50  {common.verdict(ratio >= 0.5)}")
    if common.profiling():
        print("cProfile, poll 2bd:")
        common.profile(sides["poll 2bd"][0])
        put_back[KindBusiness]()


def main():
    print(f"machine: {common.machine()}")
    for alias in DATABASES:
        run(alias, DUE if connections[alias].vendor == "postgresql" else SQLITE_DUE)


if __name__ == "__main__":
    main()
    print(f"machine at the end: {common.machine()}")
