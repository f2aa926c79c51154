"""Shared by the "Deadlines at scale" benchmarks: sizes, rounds, a fixed "now", fast
loading with due instants computed by the engine, medians and verdicts.

Rows are built fast and honestly: ``TEMPLATES`` distinct records are made in
Python, each settled the way a worker would have left it at ``NOW`` (every
deadline due by then already fired: fired columns set, an every's last firing
written, past its ``until``), and their ``next_due_at`` computed by the
engine's own ``deadlines.next_due``. ``INSERT … SELECT`` then copies them to
the wanted size, each copy shifted by under a second (the same shift on every
instant of the row, so the due instant shifts with its anchors and the rows
stay distinct in the index). A random sample is read back through the ORM and
checked against ``deadlines.next_due``.
"""

import cProfile
import io
import os
import pstats
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import connections, models

from benchmarks import settings
from django_workflow.model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from django_workflow.model.triggers import WorkKind
from django_workflow.model.versions import workflow_of
from django_workflow.scheduling import due_at
from django_workflow.work.due_instants import next_due

#: A Tuesday 10:00 in Zagreb; Monday was a holiday, and so were Thursday and Friday before.
NOW = datetime(2026, 12, 29, 10, 0, tzinfo=ZoneInfo("Europe/Zagreb")).astimezone(UTC)
ROUNDS = max(5, int(os.environ.get("BENCH_ROUNDS", 5)))
ROWS = int(os.environ.get("BENCH_ROWS", 1_000_000))
TEMPLATES = int(os.environ.get("BENCH_TEMPLATES", 10_000))
#: How long after its due instant a worker polling every minute fired a deadline.
LAG = timedelta(seconds=37)


def sizes(default="100000,1000000,5000000"):
    return sorted(int(size) for size in os.environ.get("BENCH_SIZES", default).split(","))


def use(alias):
    """Route the benchmark models (and so ``poll``/``run_work``) to ``alias``."""
    settings.BENCH_DATABASE[0] = alias


# Building rows -------------------------------------------------------------------------


def settle(record, now):
    """Fire, as a worker would have by ``now``, every deadline of the record's step that fell
    due; returns whether anything fired. An every past its ``until`` has its firings too."""
    workflow = workflow_of(record)
    fired = False
    for work in workflow.deadline_works.get(getattr(record, workflow.state_attribute), ()):
        for _ in range(1000):
            # An every's due instant ignores "now >= until" when asked at its entry.
            asked = getattr(record, STATE_ENTERED_AT) if work.kind == WorkKind.EVERY else now
            due = due_at(work, record, asked)
            if due is None or due > now:
                break
            at = min(due + LAG, now)
            for column in work.fired_together or (work.fired_field or work.last_fired_field,):
                setattr(record, column, at)
            fired = True
    return fired


def on_minute(instant):
    """At 30 s past a minute: a shift of under a second never crosses a day or an ``until``."""
    return instant.replace(second=30, microsecond=0)


def columns(model):
    return [field for field in model._meta.concrete_fields if not field.primary_key]


def build_templates(model, alias, make, now=NOW, count=None):
    """``count`` settled records (unsaved) made by ``make(index, rng) -> field values``;
    returns ``(records, tags)`` where each tag says what the record is, for the census."""
    rng = random.Random(20261229)
    records, tags = [], []
    has_deadlines = model.workflow.has_deadlines
    for index in range(count or TEMPLATES):
        record = model(**make(index, rng))
        record._state.db = alias
        fired = settle(record, now) if has_deadlines else False
        if has_deadlines:
            due = next_due(record, now)
            assert due is None or due > now, (model, index, due)
            setattr(record, NEXT_DUE_AT, due)
        tags.append(tag(record, fired, now))
        records.append(record)
    return records, tags


def tag(record, fired, now):
    workflow = workflow_of(record)
    works = workflow.deadline_works.get(getattr(record, workflow.state_attribute), ())
    if not works:
        return "in a step without deadlines"
    if getattr(record, NEXT_DUE_AT) is None:
        everies = [w for w in works if w.kind == WorkKind.EVERY]
        if everies and all(due_at(w, record, now) is None for w in everies):
            return "past an every's until (nothing pending)"
        return "already fired this round (nothing pending)"
    if fired:
        return "fired, next firing pending"
    return "pending, not yet fired"


def load(model, alias, size, make=None, now=NOW, templates=None):
    """Grow (or rebuild) the model's table to ``size`` rows; returns seconds spent."""
    connection = connections[alias]
    table = model._meta.db_table
    started = time.perf_counter()
    fields = columns(model)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), coalesce(max(id), 0) FROM {table}")
        count, top = cursor.fetchone()
        if count != top or count > size or not _templates_ready(cursor, model, alias):
            cursor.execute(f"DELETE FROM {table}")
            count = 0
            _write_templates(cursor, model, alias, make or maker(model, now), now, templates)
        if size > count:
            _copy(cursor, connection, table, fields, count + 1, size, len(_written[(model, alias)]))
        if connection.vendor == "postgresql":
            cursor.execute(f"VACUUM ANALYZE {table}")
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {size})")
        else:
            cursor.execute(f"ANALYZE {table}")
    return time.perf_counter() - started


def _tpl(model):
    return f"tpl_{model._meta.db_table}"


_written = {}


def _templates_ready(cursor, model, alias):
    return (model, alias) in _written


def _write_templates(cursor, model, alias, make, now, templates=None):
    records, tags = build_templates(model, alias, make, now, templates)
    _written[(model, alias)] = tags
    connection = connections[alias]
    fields = columns(model)
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    cursor.execute(f"DROP TABLE IF EXISTS {_tpl(model)}")
    cursor.execute(
        f"CREATE TABLE {_tpl(model)} AS SELECT {names} FROM {model._meta.db_table} WHERE 1 = 0"
    )
    cursor.execute(f"ALTER TABLE {_tpl(model)} ADD COLUMN k integer")
    marks = ", ".join(["%s"] * (len(fields) + 1))
    rows = [
        [f.get_db_prep_save(getattr(r, f.attname), connection) for f in fields] + [index]
        for index, r in enumerate(records)
    ]
    cursor.executemany(f"INSERT INTO {_tpl(model)} ({names}, k) VALUES ({marks})", rows)


def _copy(cursor, connection, table, fields, first, last, n):
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    tpl = f"tpl_{table}"
    if connection.vendor == "postgresql":
        shift = "((g::bigint * 7919) %% 999983) * interval '1 microsecond'"
        values = ", ".join(
            f"t.{connection.ops.quote_name(f.column)} + {shift}"
            if isinstance(f, models.DateTimeField)
            else f"t.{connection.ops.quote_name(f.column)}"
            for f in fields
        )
        cursor.execute(
            f"INSERT INTO {table} (id, {names}) SELECT g, {values} "
            f"FROM generate_series(%s, %s) g JOIN {tpl} t ON t.k = g %% {n}",
            [first, last],
        )
    else:  # SQLite stores instants as text: copies are exact, not shifted
        values = ", ".join(f"t.{connection.ops.quote_name(f.column)}" for f in fields)
        cursor.execute(
            f"WITH RECURSIVE g(n) AS (SELECT %s UNION ALL SELECT n + 1 FROM g WHERE n < %s) "
            f"INSERT INTO {table} (id, {names}) SELECT g.n, {values} "
            f"FROM g JOIN {tpl} t ON t.k = g.n %% {n}",
            [first, last],
        )


def census(model, alias, size):
    """How many rows of each kind the table holds (from the templates it was copied from)."""
    tags = _written[(model, alias)]
    n = len(tags)
    counts = {}
    for index, label in enumerate(tags):  # row g copies template g % n, g = 1..size
        copies = size // n + (1 if 0 < index <= size % n else 0)
        counts[label] = counts.get(label, 0) + copies
    return "; ".join(f"{label} {count:,}" for label, count in sorted(counts.items()))


def maker(model, now=NOW, steps=None):
    """Values for template ``index``: spread over ``steps`` (default: all), entered up to 60
    days before ``now``, a fifth of them over the holidays and weekend just behind it."""
    workflow = model.workflow
    steps = steps or list(workflow.steps)
    calculated = "submitted_at" in {f.name for f in model._meta.fields}

    def make(index, rng):
        kind = index % 20
        if kind < 2:
            back = rng.uniform(10, 60)  # long ago: fired, past until
        elif kind < 6:
            back = rng.uniform(0, 7)  # Wednesday before the holidays until now
        else:
            back = rng.uniform(0, 10)
        entered = on_minute(now - max(timedelta(days=back), timedelta(minutes=1)))
        values = {workflow.state_attribute: steps[(index // 20) % len(steps)]}
        values[STATE_ENTERED_AT] = entered
        if calculated:
            offset = timedelta(days=rng.uniform(-30, 5))
            values["submitted_at"] = None if kind == 19 else on_minute(now + offset)
        return values

    return make


def verify(model, alias, size, sample=500, now=NOW):
    """Read a random sample through the ORM: its stored ``next_due_at`` is what the engine
    computes, and nothing is due at ``now``. Returns the sample size checked."""
    rng = random.Random(size)
    keys = rng.sample(range(1, size + 1), min(sample, size))
    rows = model.workflow.queryset(alias).filter(pk__in=keys)
    checked = 0
    for record in rows:
        expected = next_due(record, now)
        stored = getattr(record, NEXT_DUE_AT)
        assert expected == stored, f"{model.__name__} {record.pk}: {stored} != {expected}"
        checked += 1
    assert checked == len(keys)
    due = model._base_manager.using(alias).filter(**{f"{NEXT_DUE_AT}__lte": now}).exists()
    assert not due, f"{model.__name__}: rows due at {now}"
    return checked


# Measuring -----------------------------------------------------------------------------


def alternate(sides, rounds=ROUNDS, between=None):
    """Run every side once per round, the order reversed every other round, so drift
    hits all alike; ``between()`` runs after each side. Returns each side's values."""
    results = {label: [] for label in sides}
    labels = list(sides)
    for number in range(rounds):
        for label in labels if number % 2 == 0 else labels[::-1]:
            results[label].append(sides[label]())
            if between is not None:
                between(label)
    return results


def per_call(function, calls, budget=None, least=5):
    """The median seconds of ``calls`` calls (fewer, but at least ``least``, past ``budget`` s)."""
    samples = []
    begun = time.perf_counter()
    for _ in range(calls):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
        if budget is not None and len(samples) >= least and started - begun > budget:
            break
    return statistics.median(samples)


def med(values):
    return statistics.median(values)


def spread(values, scale=1.0, digits=1):
    values = [v * scale for v in values]
    return f"{med(values):,.{digits}f} [{min(values):,.{digits}f}-{max(values):,.{digits}f}]"


def machine():
    """What else the machine was doing: load averages, CPUs, and whether the idle-priority
    spinners kept the CPUs awake (``benchmarks/spinners.py``; the load counts them)."""
    with open("/proc/loadavg") as handle:
        load = " ".join(handle.read().split()[:3])
    spinning = os.environ.get("BENCH_SPINNING", "off")
    return f"{os.cpu_count()} CPUs, load average {load}, spinners {spinning}"


def verdict(ok):
    return "PASS" if ok else "MISS"


def profile(function, top=18):
    """cProfile of ``function()``, its busiest functions by cumulative time (BENCH_PROFILE=1)."""
    profiler = cProfile.Profile()
    profiler.enable()
    function()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(
        os.environ.get("BENCH_PROFILE_SORT", "cumulative")
    ).print_stats(top)
    print(out.getvalue())


def profiling():
    return os.environ.get("BENCH_PROFILE") == "1"


def no_flush(sender, connection, **kwargs):
    """SQLite without a disk flush per commit, like the benchmarks' PostgreSQL (fsync=off)."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = OFF")
