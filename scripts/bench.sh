#!/usr/bin/env bash
# Benchmarks (not part of the tests). Starts its own PostgreSQL like the tests do.
#   make bench                                       every benchmark, full sizes (about an hour)
#   make bench BENCHMARKS=benchmarks/deadlines.py    one file
#   BENCH_SIZES=100000,1000000 BENCH_ROWS=100000 make bench   a quicker run
#   BENCH_SMALL=1 make bench BENCHMARKS=benchmarks/throughput.py   throughput in a few minutes
#   BENCH_SPINNERS=off make bench ...    without the idle-priority busy loops (on by default)
#   BENCH_SPINNERS=both make bench ...   each benchmark with them, then without
# Each file's docstring says what it measures and which BENCH_* variables it reads.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
ensure_venv .venv 3.11 "Django>=5.2,<5.3" "dev,bench"
eval "$(scripts/postgres.sh start)"
benchmarks=("$@")
[ ${#benchmarks[@]} -gt 0 ] || benchmarks=(
  benchmarks/deadlines.py
  benchmarks/many_deadlines.py
  benchmarks/actions.py
  benchmarks/safety_net.py
  benchmarks/idle_cpu.py
  benchmarks/transitions.py
  benchmarks/worker.py
  benchmarks/bulk.py
  benchmarks/actionable.py
  benchmarks/actionable_holders.py
  benchmarks/report.py
  benchmarks/throughput.py
  benchmarks/profile_firing.py
)
# With one idle-priority busy loop per CPU the CPUs stay awake, and a figure is the
# code's own cost, not the wake-ups of halted vCPUs (benchmarks/spinners.py).
case "${BENCH_SPINNERS:-on}" in
  on) modes=(on) ;;
  off) modes=(off) ;;
  both) modes=(on off) ;;
  *) echo "BENCH_SPINNERS is on, off or both" >&2; exit 2 ;;
esac
spinners=
stop_spinners() { [ -z "$spinners" ] || { kill "$spinners" 2>/dev/null; wait "$spinners" 2>/dev/null || true; }; spinners=; }
trap 'stop_spinners; scripts/postgres.sh stop' EXIT
for benchmark in "${benchmarks[@]}"; do
  for mode in "${modes[@]}"; do
    if [ "$mode" = on ]; then
      .venv/bin/python -m benchmarks.spinners &
      spinners=$!
    fi
    echo "==> $benchmark (spinners $mode; BENCH_SIZES=${BENCH_SIZES:-default} BENCH_ROWS=${BENCH_ROWS:-default})"
    BENCH_SPINNING=$mode .venv/bin/python "$benchmark"
    stop_spinners
  done
done
