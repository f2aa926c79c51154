"""Throughput: the engine's hot paths against hand-written loops doing the same writes.

What it prints, per database (PostgreSQL, then SQLite), as one table whose rows are
records/s (median [min-max] over rounds) with the ratio to each baseline (median of
the per-round ratios [min-max]) and the target beside it:

1. Automatic steps. ``worker``: ``manage.py workflow_worker`` in a subprocess (one
   django-q2 worker), ``BENCH_AUTO`` records entering an automatic step whose
   action does nothing (``bulk_create``), timed from the entry's commit until every
   record has moved on (the worker is started and ready before, stopped after).
   ``engine run_steps``: the run's body in this process, ``engine.steps.run_steps``
   over ``BENCH_AUTO_BODY`` records waiting in the step. ``raw prepared`` / ``raw
   pipelined``: the same records run by ``raw_loops.automatic_steps`` (psycopg 3,
   the records table as the queue read a hundred at a time, each record claimed by
   its attempt row's ``INSERT ... ON CONFLICT DO NOTHING`` committed before the
   action, then locked ``FOR UPDATE``, as the engine does). Targets:
   worker >= 1,000/s, and >= 0.7x the hand-written body. On SQLite ``raw prepared,
   paced`` takes each record in a turn of the worker's (``pacing.turn``), as the
   engine does, and the ratio targets are against it.
2. Action timeouts. ``worker``: ``BENCH_DUE`` records due when the worker starts;
   its rate is taken over its log rows (first to last fired), so the wait for its
   first poll is not in it. ``engine poll``: ``polling.poll`` in this process.
   ``raw prepared`` / ``raw pipelined``: ``raw_loops.action_timeouts``; ``raw in
   atomic()``: the raw prepared loop on Django's connection, each record in Django's
   ``transaction.atomic()`` (shown: what Django's transactions cost, no engine). Targets:
   >= 0.8x raw prepared, >= 0.6x raw pipelined.
3. Manual transitions: ``record.flip()``/``flop()`` in this process,
   ``BENCH_TRANSITIONS`` per round on one record, against
   ``raw_loops.manual_transitions`` and django-fsm-2 (``benchapp.Peer``, a log
   row of the same shape), and the raw loop in ``transaction.atomic()`` (shown, as
   for action timeouts). Target >= 0.5x raw prepared.
4. First poll: seconds from starting the worker process to the first due deadline
   fired (from the action-timeout rounds). Target <= 2 s.

Round trips per record (PostgreSQL) are counted with libpq's protocol trace on the
connection (one ReadyForQuery per round trip); ``BENCH_SHOW_SQL=1`` lists them.

Worst-case data: every table starts with ``BENCH_BACKGROUND`` rows already through
(records moved on, deadlines already fired, their log rows), so each claim and
each log INSERT meets a full index. Sides alternate per round, the order reversed
every other round; the machine may be shared: compare ratios of the same run.

    make bench BENCHMARKS=benchmarks/throughput.py
    BENCH_SMALL=1 make bench BENCHMARKS=benchmarks/throughput.py    (a few minutes)
    BENCH_DATABASES=postgres, BENCH_ROUNDS, BENCH_AUTO, BENCH_AUTO_BODY, BENCH_DUE,
    BENCH_TRANSITIONS, BENCH_BACKGROUND, BENCH_WORKER_ROUNDS override the sizes.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SMALL = os.environ.get("BENCH_SMALL") == "1"


from benchmarks.databases import set_up

set_up(__file__, "throughput")

from benchmarks import throughput_sides as sides

if __name__ == "__main__":
    sides.main()
