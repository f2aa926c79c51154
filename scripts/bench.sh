#!/usr/bin/env bash
# Benchmarks (not part of the tests). Starts its own PostgreSQL like the tests do.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
ensure_venv .venv 3.11 "Django>=5.2,<5.3" "dev,bench"
eval "$(scripts/postgres.sh start)"
trap 'scripts/postgres.sh stop' EXIT
benchmarks=("$@")
[ ${#benchmarks[@]} -gt 0 ] || benchmarks=(benchmarks/transitions.py benchmarks/deadlines.py benchmarks/actions.py benchmarks/worker.py)
for benchmark in "${benchmarks[@]}"; do
  echo "==> $benchmark"
  .venv/bin/python "$benchmark"
done
