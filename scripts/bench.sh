#!/usr/bin/env bash
# Benchmarks (not part of the tests). Starts its own PostgreSQL like the tests do.
#   make bench                                       every benchmark, full sizes (about an hour)
#   make bench BENCHMARKS=benchmarks/deadlines.py    one file
#   BENCH_SIZES=100000,1000000 BENCH_ROWS=100000 make bench   a quicker run
#   BENCH_SMALL=1 make bench BENCHMARKS=benchmarks/throughput.py   throughput in a few minutes
# Each file's docstring says what it measures and which BENCH_* variables it reads.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
ensure_venv .venv 3.11 "Django>=5.2,<5.3" "dev,bench"
eval "$(scripts/postgres.sh start)"
trap 'scripts/postgres.sh stop' EXIT
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
)
for benchmark in "${benchmarks[@]}"; do
  echo "==> $benchmark (BENCH_SIZES=${BENCH_SIZES:-default} BENCH_ROWS=${BENCH_ROWS:-default})"
  .venv/bin/python "$benchmark"
done
