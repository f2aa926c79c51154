"""One idle-priority busy loop per CPU, for as long as this process runs.

These virtual machines halt an idle CPU, and waking it costs every round trip of a
latency-bound loop the same wake-up: a quiet machine flatters slow code, since the
engine's own time per record hides behind the wake-ups a hand-written loop pays too.
A ``SCHED_IDLE`` loop takes no time from real work (the kernel runs it only when
nothing else wants the CPU) but keeps the CPUs awake, so a benchmark measures the
engine's own cost. ``scripts/bench.sh`` runs the benchmarks beside it unless
``BENCH_SPINNERS=off``.

    python -m benchmarks.spinners     (until killed)
"""

import multiprocessing
import os
import signal
import sys
from contextlib import contextmanager


def spin() -> None:
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    while True:
        pass


@contextmanager
def spinning():
    """One spinner per CPU while the block runs."""
    spinners = [
        multiprocessing.Process(target=spin, daemon=True) for _ in range(os.cpu_count() or 1)
    ]
    for spinner in spinners:
        spinner.start()
    try:
        yield len(spinners)
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the spinners stop with it
    with spinning() as count:
        print(f"spinners: {count} idle-priority busy loops, one per CPU", flush=True)
        signal.pause()
