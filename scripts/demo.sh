#!/usr/bin/env bash
# The example project on SQLite: migrate, seed demo data, run the worker and the web server.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
ensure_venv .venv 3.11 "Django>=5.2,<5.3"

.venv/bin/python manage.py migrate --no-input
.venv/bin/python manage.py seed_demo

.venv/bin/python manage.py workflow_worker &
worker=$!
.venv/bin/python manage.py runserver --noreload "${DEMO_ADDRESS:-127.0.0.1:8000}" &
web=$!
trap 'kill $worker $web 2>/dev/null || true; wait' EXIT
trap 'exit 0' INT TERM
echo "Worker (pid $worker) and web server (pid $web) running. Stop both with Ctrl-C."
wait -n
