"""What OpenTelemetry spans cost a manual transition (docs/traces-and-metrics.md).

The transitions of ``benchmarks/transitions.py`` (guarded, saved and logged in one
transaction, no save-signal receiver), a fresh record per round, four ways,
alternated in one run (the order reversed every other round):

- not importable: ``django_workflow.process.traces`` as a failed import of
  ``opentelemetry`` leaves it (no tracer): every hook returns at its first line;
- API, no SDK: ``opentelemetry-api`` installed and no tracer provider configured
  (the API's no-op spans);
- SDK, no-op exporter: a ``TracerProvider`` with a ``BatchSpanProcessor`` and an
  exporter that drops what it is given: everything but the export is paid;
- the same, sampling one trace in ten (``TraceIdRatioBased(0.1)``);
- the SDK's own share, shown: a ``TracerProvider`` with no span processor (the span
  made and its attributes cleaned, nothing done at its end), and one with a
  ``SimpleSpanProcessor`` and the no-op exporter (no background thread).

Targets: SDK with a no-op exporter / not importable <= 1.10. For not installed
against no hooks at all, which one process cannot hold both of, the hooks'
own cost with the tracer absent is timed (a million calls) and set against the
median transition: <= 1.02.

The figure is each side's median round, [min-max] over rounds, µs per transition, by
the wall clock and by this process's CPU time (on a shared machine the wall clock also
counts the turns other processes took; on PostgreSQL the CPU time leaves the server's
work out).

    scripts/postgres.sh start, then .venv/bin/python benchmarks/traces.py
    BENCH_DATABASES=default .venv/bin/python benchmarks/traces.py   (SQLite only)
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("traces")

import django

django.setup()

from django.core.management import call_command
from django.db.backends.signals import connection_created
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

from benchmarks import common
from benchmarks.benchapp.models import Ours
from django_workflow.model.triggers import Event, Trigger
from django_workflow.process import traces

ROUNDS = int(os.environ.get("BENCH_ROUNDS", 15))
PER_ROUND = int(os.environ.get("BENCH_TRANSITIONS", 400))
NAMES = ("flip", "flop")
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")
HOOK_CALLS = 1_000_000


connection_created.connect(common.no_flush)


class Dropped(SpanExporter):
    """An exporter that exports nothing: the spans are made, processed and dropped."""

    def __init__(self):
        self.spans = 0

    def export(self, spans):
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


DROPPED = Dropped()
SDK = TracerProvider()
SDK.add_span_processor(BatchSpanProcessor(DROPPED))
SAMPLED = TracerProvider(sampler=TraceIdRatioBased(0.1))
SAMPLED.add_span_processor(BatchSpanProcessor(Dropped()))
SIMPLE = TracerProvider()
SIMPLE.add_span_processor(SimpleSpanProcessor(Dropped()))

#: label: the tracer ``django_workflow.process.traces`` uses in the round
TRACERS = {
    "not importable": None,
    "API, no SDK": trace.get_tracer("django_workflow"),  # the API's proxy: no provider set
    "SDK, no-op exporter": SDK.get_tracer("django_workflow"),
    "SDK, 1 in 10 sampled": SAMPLED.get_tracer("django_workflow"),
    "SDK, no processor": TracerProvider().get_tracer("django_workflow"),
    "SDK, simple processor": SIMPLE.get_tracer("django_workflow"),
}


#: label: this process's CPU seconds per transition, each round (the wall clock's are
#: returned): on a machine shared with other work, what the side itself spent.
CPU = {label: [] for label in TRACERS}


def one_round(label, alias, count=PER_ROUND):
    """``count`` transitions on a fresh record with ``label``'s tracer; seconds each."""
    traces._tracer = TRACERS[label]
    try:
        record = Ours.objects.using(alias).create()
        record = Ours.objects.using(alias).get(pk=record.pk)
        started, cpu = time.perf_counter(), time.process_time()
        for index in range(count):
            record.transition(NAMES[index % 2], actor="bench")
        CPU[label].append((time.process_time() - cpu) / count)
        return (time.perf_counter() - started) / count
    finally:
        traces._tracer = TRACERS["not importable"]


def hooks_absent():
    """Seconds the engine's tracing hooks take per transition with no tracer: ``moved``
    and ``within`` as ``moves.announce`` calls them."""
    traces._tracer = None
    event = Event("open", "closed", "flip", Trigger.MANUAL)

    def follow_up():
        return None

    started = time.perf_counter()
    for _ in range(HOOK_CALLS):
        traces.within(traces.moved(Ours, 1, event, "default"), follow_up)
    return (time.perf_counter() - started) / HOOK_CALLS


def measure(alias):
    call_command("migrate", database=alias, run_syncdb=True, verbosity=0)
    for label in TRACERS:  # warm caches and connections
        one_round(label, alias, 100)
    for values in CPU.values():
        values.clear()
    sides = {label: (lambda label=label: one_round(label, alias)) for label in TRACERS}
    wall = common.alternate(sides, rounds=ROUNDS)
    return {"wall clock": wall, "this process's CPU": {k: list(v) for k, v in CPU.items()}}


def report(alias, clocks, hook):
    label = "postgresql" if alias == "postgres" else "sqlite"
    for clock, timings in clocks.items():
        print()
        print(
            f"{label}, {clock}: {ROUNDS} rounds x {PER_ROUND} transitions, alternated; "
            "median round [min-max], µs per transition"
        )
        for name, values in timings.items():
            print(f"  {name:<24}{common.spread(values, 1e6):>26}")
        med = {name: statistics.median(values) for name, values in timings.items()}
        base = med["not importable"]
        sdk = med["SDK, no-op exporter"] / base
        api = med["API, no SDK"] / base
        absent = base / (base - hook)
        print(f"  SDK, no-op exporter / not importable   {sdk:5.3f}  target <= 1.10  ", end="")
        print(common.verdict(sdk <= 1.10))
        print(f"  API, no SDK / not importable           {api:5.3f}  (shown)")
        for side in ("SDK, 1 in 10 sampled", "SDK, no processor", "SDK, simple processor"):
            print(f"  {side + ' / not importable':<39}{med[side] / base:5.3f}  (shown)")
        print(
            f"  not importable / no hooks              {absent:7.5f}  target <= 1.02  "
            f"{common.verdict(absent <= 1.02)}  (hooks {hook * 1e9:.0f} ns of {base * 1e6:.1f} µs)"
        )


def main():
    print(f"machine: {common.machine()}")
    hook = hooks_absent()
    results = {alias: measure(alias) for alias in DATABASES}
    SDK.force_flush()
    assert DROPPED.spans >= ROUNDS * PER_ROUND * len(DATABASES), DROPPED.spans
    for alias, clocks in results.items():
        report(alias, clocks, hook)
    print(f"spans made and dropped: {DROPPED.spans:,}")
    print(f"machine at the end: {common.machine()}")


if __name__ == "__main__":
    main()
