"""The sides of benchmarks/throughput.py (imported once Django is set up; see its
docstring for what each measures)."""

import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import psycopg
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from benchmarks import common, raw_loops
from benchmarks.benchapp.models import Flow, Nudge, Ours, Peer
from django_workflow.engine.steps import run_steps
from django_workflow.models import TransitionLog
from django_workflow.process import pacing
from django_workflow.work.due_instants import next_due
from django_workflow.worker.schedulers.polling import poll

ROOT = Path(__file__).resolve().parent.parent
SMALL = os.environ.get("BENCH_SMALL") == "1"


def size(name, full, small):
    return int(os.environ.get(name, small if SMALL else full))


ROUNDS = size("BENCH_ROUNDS", 5, 3)
AUTO = size("BENCH_AUTO", 3000, 500)
AUTO_BODY = size("BENCH_AUTO_BODY", 3000, 1000)
DUE = size("BENCH_DUE", 10_000, 2000)
TRANSITIONS = size("BENCH_TRANSITIONS", 1000, 500)
BACKGROUND = size("BENCH_BACKGROUND", 100_000, 20_000)
SHOW_SQL = os.environ.get("BENCH_SHOW_SQL") == "1"
LOG = TransitionLog._meta.db_table
FLOW, NUDGE, OURS = Flow._meta.db_table, Nudge._meta.db_table, Ours._meta.db_table


# The database --------------------------------------------------------------------------


def vendor():
    return connection.vendor


def driver():
    """A connection of the bare driver to the benchmark's database."""
    db = settings.DATABASES["default"]
    if vendor() == "postgresql":
        params = {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "dbname": db["NAME"]}
        return raw_loops.Driver("postgresql", params)
    return raw_loops.Driver("sqlite", {"database": db["NAME"]})


def run_sql(*statements):
    with connection.cursor() as cursor:
        for statement in statements:
            if isinstance(statement, tuple):
                cursor.execute(*statement)
            else:
                cursor.execute(statement)


def scalar(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def stamp(instant):
    return connection.ops.adapt_datetimefield_value(instant)


def vacuum(*tables):
    statement = "VACUUM ANALYZE {}" if vendor() == "postgresql" else "ANALYZE {}"
    run_sql(*(statement.format(table) for table in tables))


def content_type(model):
    return ContentType.objects.get_for_model(model).pk


class Background:
    """Rows already through every path: records moved on, deadlines fired, log rows.
    The sides add rows above these keys and ``reset`` deletes them again."""

    def __init__(self, count):
        now = timezone.now()
        day = timedelta(days=1)
        rows = [(stamp(now - 2 * day),)] * count
        nudges = [(stamp(now - 2 * day), stamp(now - day), stamp(now - day))] * count
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {FLOW} (state, state_entered_at) VALUES ('done', %s)", rows
            )
            cursor.executemany(
                f"INSERT INTO {OURS} (state, state_entered_at) VALUES ('open', %s)", rows
            )
            cursor.executemany(
                f"INSERT INTO {NUDGE} (state, state_entered_at, remind_at, "
                "waiting_remind_fired_at) VALUES ('waiting', %s, %s, %s)",
                nudges,
            )
        self._log(FLOW, Flow, "auto", "done", "work", "automatic")
        self._log(NUDGE, Nudge, "waiting", "waiting", "remind", "timeout")
        self.tops = {table: scalar(f"SELECT max(id) FROM {table}") for table in (FLOW, NUDGE)}
        self.tops[OURS] = scalar(f"SELECT max(id) FROM {OURS}")
        self.tops[LOG] = scalar(f"SELECT max(id) FROM {LOG}")
        vacuum(FLOW, NUDGE, OURS, LOG)

    def _log(self, table, model, source, target, name, trigger):
        run_sql(
            (
                f"INSERT INTO {LOG} ({raw_loops.LOG_COLUMNS}) SELECT %s, CAST(id AS VARCHAR(20)), "
                f"%s, %s, %s, %s, state_entered_at, state_entered_at, NULL, '', NULL, '', NULL, "
                f"'', NULL FROM {table}",
                [content_type(model), source, target, name, trigger],
            )
        )

    def reset(self, *tables):
        """Delete what the sides added (rows, log rows, attempt rows)."""
        run_sql(
            *(f"DELETE FROM {table} WHERE id > {self.tops[table]}" for table in tables),
            f"DELETE FROM {LOG} WHERE id > {self.tops[LOG]}",
            "DELETE FROM django_workflow_workattempt",
        )
        vacuum(*tables, LOG)


# Counting round trips --------------------------------------------------------------------


def traced(pgconn, function):
    """Run ``function()`` under libpq's protocol trace: (round trips, statements sent)."""
    with tempfile.NamedTemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS | psycopg.pq.Trace.REGRESS_MODE)
        try:
            function()
        finally:
            pgconn.untrace()
        trace.seek(0)
        lines = [line.rstrip("\n").split("\t") for line in trace]
    trips = sum(1 for parts in lines if parts[0] == "B" and parts[2].startswith("ReadyForQuery"))
    sent = [
        parts[3].strip()[:110] if parts[2] != "Bind" else f"EXECUTE {parts[3].split()[1]}"
        for parts in lines
        if parts[0] == "F" and parts[2] in ("Query", "Parse", "Bind")
    ]
    return trips, sent


def per_record(pgconn, prepare, run, small=1, large=11):
    """Round trips per record: the difference between runs over ``large`` and ``small``
    records, so what is paid once per run (a last empty claim, a batch read) is left out."""
    counts = {}
    prepare(small)
    run()  # untraced: statements prepared once per connection are not per record
    for n in (small, large):
        prepare(n)
        counts[n], sent = traced(pgconn, run)
    if SHOW_SQL:
        print(f"    statements for {small} record(s) then {large}; last run's:")
        for statement in sent[: len(sent) // large + 4]:
            print(f"      {statement}")
    return (counts[large] - counts[small]) / (large - small)


def django_pgconn():
    connection.ensure_connection()
    return connection.connection.pgconn


# The worker ------------------------------------------------------------------------------


class Worker:
    """``manage.py workflow_worker`` in a process group of its own, one django-q2 worker."""

    def __init__(self):
        self.log = Path(tempfile.mkdtemp(prefix="workflow-throughput-")) / "worker.log"

    def start(self, ready=True):
        connection.close()
        self.started = time.time()
        with open(self.log, "w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "django", "workflow_worker"],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if ready:
            wait_for(lambda: "running:" in self.log.read_text(), 120, "the worker's start")
            time.sleep(2)  # past its start-up sweeps

    def stop(self):
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=90)
        connection.close()


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return time.perf_counter()
        time.sleep(0.005)
    raise TimeoutError(f"{what}: not done in {seconds} s")


# 1. Automatic steps ----------------------------------------------------------------------


def waiting_flows(count):
    """``count`` records waiting in the automatic step, written without announcing them
    (no task queued); their keys."""
    at = stamp(timezone.now())
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {FLOW} (state, state_entered_at) VALUES ('auto', %s)", [(at,)] * count
        )
    return list(Flow._base_manager.filter(state="auto").order_by("pk").values_list("pk", flat=True))


def moved_all():
    assert not Flow._base_manager.filter(state="auto").exists(), "records left in the step"
    return True


def automatic_worker(worker, count):
    def run():
        worker.start()
        try:
            marks = []
            with transaction.atomic():
                transaction.on_commit(lambda: marks.append(time.perf_counter()))
                Flow.objects.bulk_create([Flow() for _ in range(count)], batch_size=1000)
            left = Flow._base_manager.filter(state="auto")
            ended = wait_for(lambda: not left.exists(), 1800, "the worker's automatic steps")
        finally:
            worker.stop()
        return count / (ended - marks[0])

    return run


def automatic_engine(count):
    def run():
        waiting_flows(count)
        started = time.perf_counter()
        moved, _ = run_steps(Flow, "auto", budget=3600)
        elapsed = time.perf_counter() - started
        assert moved == count and moved_all()
        return count / elapsed

    return run


def paced_turns():
    """Each record of a raw loop in a turn of the worker's on SQLite (``pacing.turn``), so
    the loop keeps the pacing rules the worker keeps."""
    return pacing.turn(connection.alias)


def automatic_raw(count, pipelined, paced=contextlib.nullcontext):
    def run():
        waiting_flows(count)
        raw = driver()
        try:
            started = time.perf_counter()
            done = raw_loops.automatic_steps(raw, FLOW, content_type(Flow), pipelined, paced)
            elapsed = time.perf_counter() - started
        finally:
            raw.close()
        assert done == count and moved_all()
        return count / elapsed

    return run


def automatic_round_trips(background):
    flow = content_type(Flow)

    def prepare(n):
        background.reset(FLOW)
        return waiting_flows(n)

    def engine_steps():
        run_steps(Flow, "auto", budget=3600)

    trips = {"engine run_steps": per_record(django_pgconn(), prepare, engine_steps)}
    for label, pipelined in (("raw prepared", False), ("raw pipelined", True)):
        raw = driver()
        run = lambda raw=raw, p=pipelined: raw_loops.automatic_steps(raw, FLOW, flow, p)  # noqa: E731
        trips[label] = per_record(raw.connection.pgconn, prepare, run)
        raw.close()
    background.reset(FLOW)
    return trips


def automatic(background):
    worker = Worker()
    sides = {
        "worker, end to end": automatic_worker(worker, AUTO),
        "engine run_steps": automatic_engine(AUTO_BODY),
        "raw prepared": automatic_raw(AUTO_BODY, False),
    }
    if vendor() == "postgresql":
        sides["raw pipelined"] = automatic_raw(AUTO_BODY, True)
    else:
        sides["raw prepared, paced"] = automatic_raw(AUTO_BODY, False, paced_turns)
    rates = common.alternate(sides, ROUNDS, between=lambda label: background.reset(FLOW))
    trips = automatic_round_trips(background) if vendor() == "postgresql" else {}
    return rates, trips


# 2. Action timeouts (and 4. the first poll) ----------------------------------------------


def due_nudges(count):
    """``count`` records whose action timeout fell due an hour ago (next_due_at as the
    engine computes it, checked on a sample); a function putting them back as due."""
    now = timezone.now()
    entered, due = stamp(now - timedelta(hours=2)), stamp(now - timedelta(hours=1))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {NUDGE} (state, state_entered_at, remind_at, next_due_at) "
            "VALUES ('waiting', %s, %s, %s)",
            [(entered, due, due)] * count,
        )
    for record in Nudge._base_manager.filter(next_due_at__isnull=False)[:20]:
        assert next_due(record, now) == record.next_due_at, "next_due_at is not the engine's"
    return now


def put_back(background):
    run_sql(
        f"UPDATE {NUDGE} SET waiting_remind_fired_at = NULL, next_due_at = remind_at "
        f"WHERE id > {background.tops[NUDGE]}",
        f"DELETE FROM {LOG} WHERE id > {background.tops[LOG]}",
    )
    vacuum(NUDGE, LOG)


def timeouts_worker(worker, count, first_polls):
    """The worker started with ``count`` deadlines due: its firing rate over its own log
    rows (first to last), and the seconds from its start to the first one fired."""
    nudge = content_type(Nudge)

    def run():
        worker.start(ready=False)
        try:
            left = Nudge._base_manager.filter(next_due_at__isnull=False)
            wait_for(lambda: not left.exists(), 1800, "the worker's action timeouts")
        finally:
            worker.stop()
        rows = TransitionLog.objects.filter(pk__gt=TOPS[LOG], content_type_id=nudge)
        first, last = (
            rows.order_by(order).values_list("occurred_at", flat=True)[0]
            for order in ("occurred_at", "-occurred_at")
        )
        assert rows.count() == count, f"{rows.count()} log rows for {count} firings"
        first_polls.append(first.timestamp() - worker.started)
        return (count - 1) / (last - first).total_seconds()

    return run


def timeouts_engine(count):
    names = [work.name for work in Nudge.workflow.works]

    def run():
        started = time.perf_counter()
        fired = sum(poll(Nudge._meta.label, names, now=timezone.now()).values())
        elapsed = time.perf_counter() - started
        assert fired == count, f"poll fired {fired} of {count}"
        return count / elapsed

    return run


def timeouts_raw(count, pipelined, connect=driver, paced=contextlib.nullcontext):
    """The raw loop on a connection of ``connect()``: the driver's own, by default."""

    def run():
        raw = connect()
        try:
            started = time.perf_counter()
            fired = raw_loops.action_timeouts(
                raw, NUDGE, content_type(Nudge), timezone.now(), pipelined, paced
            )
            elapsed = time.perf_counter() - started
        finally:
            raw.close()
        assert fired == count, f"raw loop fired {fired} of {count}"
        return count / elapsed

    return run


def timeouts_round_trips(background):
    nudge, names = content_type(Nudge), [work.name for work in Nudge.workflow.works]

    def prepare(n):
        background.reset(NUDGE)
        due_nudges(n)

    run = lambda: poll(Nudge._meta.label, names, now=timezone.now())  # noqa: E731
    trips = {"engine poll": per_record(django_pgconn(), prepare, run)}
    for label, pipelined in (("raw prepared", False), ("raw pipelined", True)):
        raw = driver()
        run = lambda raw=raw, p=pipelined: raw_loops.action_timeouts(  # noqa: E731
            raw, NUDGE, nudge, timezone.now(), p
        )
        trips[label] = per_record(raw.connection.pgconn, prepare, run)
        raw.close()
    return trips


def timeouts(background):
    worker, first_polls = Worker(), []
    trips = timeouts_round_trips(background) if vendor() == "postgresql" else {}
    background.reset(NUDGE)
    due_nudges(DUE)
    sides = {
        "worker, firing": timeouts_worker(worker, DUE, first_polls),
        "engine poll": timeouts_engine(DUE),
        "raw prepared": timeouts_raw(DUE, False),
        "raw in atomic()": timeouts_raw(DUE, False, lambda: raw_loops.DjangoAtomic(connection)),
    }
    if vendor() == "postgresql":
        sides["raw pipelined"] = timeouts_raw(DUE, True)
    else:
        sides["raw prepared, paced"] = timeouts_raw(DUE, False, paced=paced_turns)
    rates = common.alternate(sides, ROUNDS, between=lambda label: put_back(background))
    background.reset(NUDGE)
    return rates, trips, first_polls


# 3. Manual transitions -------------------------------------------------------------------


def manual_engine(count):
    def run():
        record = Ours.objects.get(pk=Ours.objects.create().pk)
        started = time.perf_counter()
        for index in range(count):
            (record.flip if index % 2 == 0 else record.flop)(actor="bench")
        return count / (time.perf_counter() - started)

    return run


def manual_fsm(count):
    def run():
        record = Peer.objects.get(pk=Peer.objects.create().pk)
        started = time.perf_counter()
        for index in range(count):
            record.run("flip" if index % 2 == 0 else "flop", actor="bench")
        return count / (time.perf_counter() - started)

    return run


def manual_raw(count, pipelined, connect=driver):
    """The raw loop on a connection of ``connect()``: the driver's own, by default."""

    def run():
        pk = Ours.objects.create().pk
        raw = connect()
        try:
            started = time.perf_counter()
            raw_loops.manual_transitions(raw, OURS, content_type(Ours), pk, count, pipelined)
            elapsed = time.perf_counter() - started
        finally:
            raw.close()
        assert Ours.objects.get(pk=pk).state == ("open" if count % 2 == 0 else "closed")
        return count / elapsed

    return run


def manual_round_trips():
    record, ours = Ours.objects.get(pk=Ours.objects.create().pk), content_type(Ours)
    trips = {"engine flip/flop": traced(django_pgconn(), lambda: record.flip(actor="b"))[0]}
    for label, pipelined in (("raw prepared", False), ("raw pipelined", True)):
        raw = driver()
        pk = Ours.objects.create().pk
        run = lambda: raw_loops.manual_transitions(raw, OURS, ours, pk, 10, pipelined)  # noqa: E731,B023
        run()  # untraced: statements prepared once per connection are not per transition
        trips[label] = traced(raw.connection.pgconn, run)[0] / 10
        raw.close()
    return trips


def manual(background):
    sides = {
        "engine flip/flop": manual_engine(TRANSITIONS),
        "raw prepared": manual_raw(TRANSITIONS, False),
        "raw in atomic()": manual_raw(
            TRANSITIONS, False, lambda: raw_loops.DjangoAtomic(connection)
        ),
        "django-fsm-2": manual_fsm(TRANSITIONS),
    }
    if vendor() == "postgresql":
        sides["raw pipelined"] = manual_raw(TRANSITIONS, True)
    manual_engine(50)(), manual_fsm(50)()  # warm the caches
    rates = common.alternate(sides, ROUNDS)
    trips = manual_round_trips() if vendor() == "postgresql" else {}
    background.reset(OURS)
    return rates, trips


# The report ------------------------------------------------------------------------------


def ratio(rates, ours, baseline):
    """The per-round ratios (rounds alternate, so round i of each side ran side by side)."""
    return [a / b for a, b in zip(rates[ours], rates[baseline], strict=True)]


def print_rates(title, rates, trips, unit="records/s"):
    print(f"  {title}: {unit}, median [min-max] of {ROUNDS} rounds; round trips per record")
    for label, values in rates.items():
        rt = f"{trips[label]:5.1f}" if label in trips else "    -"
        print(f"    {label:<22}{common.spread(values, 1, 0):>24}   {rt}")


def print_ratio(rates, ours, baseline, target):
    values = ratio(rates, ours, baseline)
    low = f">= {target:.2f}" if target is not None else "(shown)"
    mark = common.verdict(statistics.median(values) >= target) if target is not None else ""
    print(f"    {ours} / {baseline:<16}{common.spread(values, 1, 2):>20}   target {low}  {mark}")


def report(auto, due, manual_, first_polls):
    rates, trips = auto
    title = f"1. automatic steps, {AUTO:,} through the worker, {AUTO_BODY:,} in-process"
    print_rates(title, rates, trips)
    worker = statistics.median(rates["worker, end to end"])
    mark = common.verdict(worker >= 1000)
    print(f"    worker, end to end {worker:,.0f}/s   target >= 1,000/s  {mark}")
    paced = "raw prepared, paced" in rates  # SQLite: the target is against the paced loop
    for ours in ("worker, end to end", "engine run_steps"):
        print_ratio(rates, ours, "raw prepared", None if paced else 0.7)
        if "raw pipelined" in rates:
            print_ratio(rates, ours, "raw pipelined", None)
        if paced:
            print_ratio(rates, ours, "raw prepared, paced", 0.7)
    rates, trips, _ = due
    print_rates(f"2. action timeouts, {DUE:,} due", rates, trips)
    for ours in ("worker, firing", "engine poll"):
        print_ratio(rates, ours, "raw prepared", None if paced else 0.8)
        if "raw pipelined" in rates:
            print_ratio(rates, ours, "raw pipelined", 0.6)
        if paced:
            print_ratio(rates, ours, "raw prepared, paced", 0.8)
        print_ratio(rates, ours, "raw in atomic()", None)
    print_ratio(rates, "raw in atomic()", "raw prepared", None)
    rates, trips = manual_
    print_rates(f"3. manual transitions, {TRANSITIONS:,} per round", rates, trips, "transitions/s")
    print_ratio(rates, "engine flip/flop", "raw prepared", 0.5)
    print_ratio(rates, "engine flip/flop", "raw in atomic()", None)
    print_ratio(rates, "raw in atomic()", "raw prepared", None)
    print_ratio(rates, "django-fsm-2", "raw prepared", None)
    print_ratio(rates, "engine flip/flop", "django-fsm-2", 1.4)
    if "raw pipelined" in rates:
        print_ratio(rates, "engine flip/flop", "raw pipelined", None)
    first = statistics.median(first_polls)
    print(
        f"  4. first poll: worker start to first due deadline fired "
        f"{common.spread(first_polls, 1, 1)} s   target <= 2 s  {common.verdict(first <= 2)}"
    )


TOPS = {}


def main():
    print(f"machine: {common.machine()}")
    call_command("migrate", verbosity=0)
    for model in (Flow, Nudge, Ours):
        model._base_manager.all().delete()
    TransitionLog.objects.all().delete()
    started = time.perf_counter()
    background = Background(BACKGROUND)
    TOPS.update(background.tops)
    logged = scalar(f"SELECT count(*) FROM {LOG}")
    seconds = time.perf_counter() - started
    print(f"{vendor()}: {BACKGROUND:,} rows already through in each table, {logged:,} log rows")
    print(f"  (loaded in {seconds:.0f} s; rounds: {ROUNDS}, alternated)")
    warm = Worker()  # its first start records the declarations and Schedules
    warm.start()
    warm.stop()
    results = automatic(background), timeouts(background), manual(background)
    print()
    print(f"{vendor()} (machine at the end: {common.machine()})")
    report(*results[:3], results[1][2])
