#!/usr/bin/env bash
# The example project on SQLite: migrate, seed demo data, run the worker and the web server.
# scripts/demo.sh reset: delete the demo database, migrate and seed it afresh, and stop there.
# DEMO_ADDRESS (host:port, or a port) is where the web server listens; default 127.0.0.1:8000.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
# A virtualenv of its own with the package and what the seed needs, not the test toolchain.
ensure_venv .venv-demo 3.11 "Django>=5.2,<5.3" demo

address=${DEMO_ADDRESS:-127.0.0.1:8000}
case $address in
  *:*) ;;
  *) address=127.0.0.1:$address ;;  # a port alone
esac
export DEMO_ADDRESS=$address  # the settings allow its host

if [ "${1:-}" = reset ]; then
  rm -f example_project/db.sqlite3
  echo "Deleted example_project/db.sqlite3."
fi
.venv-demo/bin/python manage.py migrate --no-input -v 0
.venv-demo/bin/python manage.py seed_demo --address "$address"
if [ "${1:-}" = reset ]; then
  echo "Reseeded. \`make demo\` runs it."
  exit 0
fi

# Each process's lines carry its name, so the worker's stay readable between requests.
export PYTHONUNBUFFERED=1
.venv-demo/bin/python manage.py workflow_worker > >(sed -u 's/^/worker | /') 2>&1 &
worker=$!
.venv-demo/bin/python manage.py runserver --noreload "$address" > >(sed -u 's/^/web    | /') 2>&1 &
web=$!
trap 'kill $worker $web 2>/dev/null || true; wait' EXIT
trap 'exit 0' INT TERM
# The banner comes last, once the web server answers, so it is not lost in the start-up.
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/${address%:*}/${address##*:}") 2>/dev/null && break
  sleep 0.2
done
cat <<BANNER

  ┌────────────────────────────────────────────────────────────
  │ Demo running: http://$address/admin/
  │ Log in as admin / admin
  │ A support agent's queue, outside the admin: http://$address/agent/ (agent / agent)
  │ Stop the web server and the worker with Ctrl-C.
  └────────────────────────────────────────────────────────────

BANNER
wait -n
