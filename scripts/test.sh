#!/usr/bin/env bash
# The whole test command: lint, migrations, and the suite on
# Python 3.11 + Django 5.2 LTS and Python 3.12 + Django 6.1, each on SQLite and PostgreSQL,
# and the stop-and-crash tests once more on the Redis broker.
# Then the built wheel in a downstream project, and an upgrade from the last release.
# Installs what the tests need when missing: PostgreSQL, Redis, Chromium and chromedriver.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh

ensure_venv .venv 3.11 "Django>=5.2,<5.3"
ensure_venv .venv-py312 3.12 "Django>=6.1,<6.2"

echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "==> documentation builds without warnings"
site_dir=$(mktemp -d)
.venv/bin/mkdocs build --strict --quiet --site-dir "$site_dir"
rm -rf "$site_dir"

echo "==> the wheel carries the templates, the static files and py.typed"
wheel_dir=$(mktemp -d)
.venv/bin/python -m pip wheel -q --no-deps -w "$wheel_dir" . 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python - "$wheel_dir"/dj_workflow-*.whl <<'PYTHON'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
wanted = [
    "django_workflow/py.typed",
    "django_workflow/templates/admin/django_workflow/panel.html",
    "django_workflow/static/django_workflow/workflow.css",
    "django_workflow/migrations/0003_attempts_survive_interruptions.py",
    "django_workflow/checks/__init__.py",
    "django_workflow/mypy.py",
]
missing = [name for name in wanted if name not in names]
assert not missing, f"the wheel lacks {missing}"
PYTHON
rm -rf "$wheel_dir"

echo "==> migrations are up to date"
.venv/bin/python manage.py makemigrations --check --dry-run
DJANGO_SETTINGS_MODULE=tests.settings .venv/bin/python -m django makemigrations --check --dry-run

echo "==> the example project type-checks: mypy --strict with the plugin, pyright over the stubs"
# Configured in pyproject.toml ([tool.mypy], [tool.pyright]); docs/types.md.
.venv/bin/mypy --strict example_project/*/models.py
.venv/bin/python manage.py workflow_stubs --out typings >/dev/null
.venv/bin/pyright --pythonpath .venv/bin/python

echo "==> browser for the admin test (Debian's chromium and chromium-driver)"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "install Debian's chromium and chromium-driver packages first" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null
fi
export WORKFLOW_REQUIRE_BROWSER=1

echo "==> starting Redis"
trap 'scripts/redis.sh stop || true' EXIT
# Assigned first: `eval "$(…)"` alone would hide a start that failed from `set -e`.
services=$(scripts/redis.sh start)
eval "$services"

# suite VENV DATABASE [PYTEST ARGS]: the suite on one Python/Django pair and one database.
suite() {
  local venv=$1 database=$2
  shift 2
  echo "==> $($venv/bin/python -c 'import sys, django; print(f"Python {sys.version.split()[0]}, Django {django.__version__}")'), $database"
  WORKFLOW_TEST_DB=$database "$venv/bin/pytest" -q "$@"
}

# Django 5.2 LTS on both databases, then workflow models on a second PostgreSQL
# database, beside SQLite and beside PostgreSQL.
lts_pair() {
  suite .venv sqlite "$@" && suite .venv postgres "$@" || return 1
  for database in sqlite postgres; do
    echo "==> workflow models on a second database, default on $database"
    WORKFLOW_TEST_DB=$database DJANGO_SETTINGS_MODULE=tests.settings_databases \
      .venv/bin/pytest -q tests/engine/test_engine_paths.py tests/engine/test_several_databases.py || return 1
  done
}

# Django 6.1 on both databases, then the stop-and-crash tests once more on the Redis
# broker: it keeps no receipts, so a task killed there is gone and only the workflow's
# recovery helps; so does the first poll, queued through it at the worker's start.
newest_pair() {
  suite .venv-py312 sqlite "$@" && suite .venv-py312 postgres "$@" || return 1
  for database in sqlite postgres; do
    echo "==> stops and crashes on the Redis broker, Python 3.12, $database"
    WORKFLOW_BROKER=redis WORKFLOW_TEST_DB=$database .venv-py312/bin/pytest -q \
      tests/automatic_steps/test_interruptions.py \
      tests/worker/test_worker.py::test_a_deadline_due_when_the_worker_starts_fires_within_seconds \
      || return 1
  done
}

# with_postgres COMMAND...: COMMAND beside a PostgreSQL server of its own, stopped after.
with_postgres() {
  local services status=0
  services=$(scripts/postgres.sh start) || return 1
  eval "$services"
  "$@" || status=$?
  scripts/postgres.sh stop
  return $status
}

# The two pairs run side by side (most of a worker test is waiting), each with its own
# PostgreSQL server: the newest pair prints as it goes, the LTS pair's output follows it.
lts_log=$(mktemp)
with_postgres lts_pair "$@" >"$lts_log" 2>&1 &
lts=$!
status=0
with_postgres newest_pair "$@" || status=1
wait $lts || status=1
cat "$lts_log"
rm -f "$lts_log"

# What the load of other processes would decide (how long a writer waits beside a worker
# on SQLite, a wedged cluster built again): the tests marked `alone`, with the machine to
# itself, after the pairs, so what they time is the worker's and not the other suites'.
if [ $status = 0 ]; then
  echo "==> the tests marked alone, on SQLite, nothing else running"
  WORKFLOW_ALONE=1 WORKFLOW_TEST_DB=sqlite .venv/bin/pytest -q -m alone tests || status=1
fi
# As users stand: the wheel in a project of its own (pytest-django's defaults, Django's
# runner, a real worker), and an upgrade in place from the last release.
if [ $status = 0 ]; then
  echo "==> downstream: the built wheel in a new project"
  scripts/downstream.sh || status=1
fi
if [ $status = 0 ]; then
  last_release=$(tail -n 1 scripts/upgrade/releases | cut -d' ' -f1)
  echo "==> upgrade from $last_release"
  scripts/upgrade.sh "$last_release" || status=1
fi
exit $status
