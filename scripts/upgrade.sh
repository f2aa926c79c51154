#!/usr/bin/env bash
# scripts/upgrade.sh FROM_TAG: an in-place upgrade from a tagged release to this checkout,
# done as a user would do it, in a scratch project on SQLite:
#   1. the release's tree (git archive) built into a wheel and installed, not editable,
#      into a fresh Python 3.12 virtualenv with Django 6.1 and time-machine;
#   2. the scratch project (scripts/upgrade/project) migrated on it, and filled with
#      records in every interesting state by `manage.py upgrade_seed`, which moves the
#      clock with time_machine up to the upgrade's "now" and writes a JSON snapshot;
#   3. this checkout built into a wheel and installed over it (pip install -U), then
#      makemigrations --noinput (the migration it writes is printed and must not touch
#      the schema), migrate, check and check --deploy --database default;
#   4. `manage.py upgrade_walk` compares the database with the snapshot, runs the tasks
#      the old release queued, then walks time forward running `workflow_worker --once`
#      at each instant, and asserts nothing was lost, done twice or done early.
# Exits non-zero naming each failed assertion. UPGRADE_KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source scripts/venv.sh

if [ $# -ne 1 ]; then
  echo "usage: scripts/upgrade.sh FROM_TAG   (e.g. scripts/upgrade.sh v0.3.0)" >&2
  exit 2
fi
tag=$1
started=$SECONDS

# The release's commit: its tag, or scripts/upgrade/releases in a clone without tags.
commit=$(git rev-parse --verify -q "$tag^{commit}" || true)
if [ -z "$commit" ]; then
  listed=$(awk -v tag="$tag" '$1 == tag { print $2 }' scripts/upgrade/releases)
  if [ -n "$listed" ]; then
    commit=$(git rev-parse --verify -q "$listed^{commit}" || true)
  fi
  if [ -z "$commit" ]; then
    echo "upgrade.sh: '$tag' is neither a tag of this repository nor a release listed in" \
      "scripts/upgrade/releases with a commit this clone has (git fetch --tags?)" >&2
    exit 2
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/upgrade.XXXXXX")
cleanup() {
  if [ "${UPGRADE_KEEP:-}" = 1 ]; then
    echo "==> kept the scratch directory $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

failures=()
fail() {
  failures+=("$1")
  echo "FAILED: $1" >&2
}

echo "==> upgrading from $tag ($commit) to the checkout at $(git rev-parse --short HEAD)$(
  git diff --quiet HEAD -- django_workflow pyproject.toml || echo ' with uncommitted changes')"

echo "==> the release's tree, built into a wheel"
mkdir -p "$work/old-src" "$work/old-wheel" "$work/new-src" "$work/new-wheel"
git archive "$commit" | tar -x -C "$work/old-src"
python=$(find_python 3.12)
pip_quiet() { grep -v -e "^WARNING: Location" -e "^\[notice\]" >&2 || true; }
"$python" -m venv "$work/venv"
venv_python=$work/venv/bin/python
# The virtualenv's Python run outside the checkout, which would shadow what is installed.
vpy() { (cd "$work" && "$venv_python" "$@"); }
vpy -m pip wheel -q --no-deps -w "$work/old-wheel" "$work/old-src" 2>&1 | pip_quiet

echo "==> a fresh virtualenv: the release's wheel, Django 6.1, time-machine"
vpy -m pip install -q "$work"/old-wheel/dj_workflow-*.whl "Django>=6.1,<6.2" \
  time-machine 2>&1 | pip_quiet
vpy -c "import django, django_workflow, sys; print(
  f'    Python {sys.version.split()[0]}, Django {django.__version__}, django_workflow from',
  django_workflow.__file__)"

echo "==> the scratch project, migrated on $tag"
cp -r scripts/upgrade/project "$work/project"
export UPGRADE_DB=$work/db.sqlite3 PYTHONDONTWRITEBYTECODE=1
manage() { (cd "$work/project" && "$venv_python" manage.py "$@" </dev/null); }
# For the record: what the release says of the scratch project with nothing silenced
# (0.3.0 refuses the `retract` transition, E017).
if UPGRADE_PHASE=new manage check >"$work/old-check.txt" 2>&1; then
  echo "    on $tag, check passes with nothing silenced"
else
  echo "    on $tag, check with nothing silenced reports (silenced for $tag only):"
  grep -E "^[a-z_.A-Z]+: \(" "$work/old-check.txt" | sed 's/^/      /' || true
fi
UPGRADE_PHASE=old manage makemigrations scratch | sed 's/^/    /'
UPGRADE_PHASE=old manage migrate -v 0

echo "==> records in every interesting state, on $tag (the clock moved by time_machine)"
UPGRADE_PHASE=old manage upgrade_seed "$work/before.json" 2>&1 | sed 's/^/    /'

echo "==> the checkout, built into a wheel and installed over $tag"
# The work tree as it is (uncommitted changes included), copied so the build writes nothing
# into it.
git ls-files -z --cached --others --exclude-standard \
  | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -x -C "$work/new-src"
vpy -m pip wheel -q --no-deps -w "$work/new-wheel" "$work/new-src" 2>&1 | pip_quiet
new_wheel=$(ls "$work"/new-wheel/dj_workflow-*.whl)
old_version=$(vpy -c "import importlib.metadata as m; print(m.version('dj-workflow'))")
vpy -m pip install -q -U "$new_wheel" "Django>=6.1,<6.2" 2>&1 | pip_quiet
new_version=$(vpy -c "import importlib.metadata as m; print(m.version('dj-workflow'))")
if [ "$old_version" = "$new_version" ]; then
  # pip install -U keeps an installed distribution of the same version.
  echo "    the checkout's version is still $new_version: reinstalling its wheel over it"
  vpy -m pip install -q --force-reinstall --no-deps "$new_wheel" 2>&1 | pip_quiet
fi
echo "    dj-workflow $old_version -> $new_version"
vpy - "$work/new-src/django_workflow" <<'PYTHON'
import filecmp, pathlib, sys
import django_workflow

built, installed = pathlib.Path(sys.argv[1]), pathlib.Path(django_workflow.__file__).parent
assert "site-packages" in str(installed), f"not installed from a wheel: {installed}"
differ = [
    str(path.relative_to(built))
    for path in built.rglob("*.py")
    if not (installed / path.relative_to(built)).exists()
    or not filecmp.cmp(path, installed / path.relative_to(built), shallow=False)
]
assert not differ, f"the installed package is not the checkout's: {differ}"
print(f"    installed in {installed}, the checkout's sources")
PYTHON

echo "==> makemigrations --noinput on the checkout"
cd "$work/project"
# django ARGS...: a management command as the deployer runs it, its output indented and
# kept in $work/last.txt. When the system checks stop a command that can skip them, that is
# recorded as a failure and it runs again with --skip-checks, so the rest of the upgrade
# is still exercised and reported.
django() {
  local status=0
  UPGRADE_PHASE=new "$venv_python" manage.py "$@" </dev/null >"$work/last.txt" 2>&1 || status=$?
  sed 's/^/    /' "$work/last.txt"
  if [ $status != 0 ] && [ "$1" != check ] && grep -q "SystemCheckError" "$work/last.txt"; then
    fail "manage.py $* was stopped by the system checks (above)"
    echo "    ... again with --skip-checks, to exercise the rest of the upgrade"
    status=0
    UPGRADE_PHASE=new "$venv_python" manage.py "$@" --skip-checks </dev/null \
      >"$work/last.txt" 2>&1 || status=$?
    sed 's/^/    /' "$work/last.txt"
  fi
  return $status
}
ls scratch/migrations/*.py >"$work/migrations-before.txt"
django makemigrations --noinput || fail "makemigrations --noinput exited non-zero"
if grep -q "assumed not renamed" "$work/last.txt"; then
  fail "makemigrations --noinput assumed a step was not renamed: the upgrade asks a question"
fi
new_migrations=$(comm -13 "$work/migrations-before.txt" <(ls scratch/migrations/*.py))
if [ -z "$new_migrations" ]; then
  echo "    no migration written for the scratch app"
else
  for migration in $new_migrations; do
    echo "    --- $migration"
    sed 's/^/    | /' "$migration"
  done
  # Expected: nothing that changes the schema of the user's tables (the release notes
  # would say so): AlterField of attributes that are not in the database (choices, help
  # text), which sqlmigrate writes no statement for.
  "$venv_python" - $new_migrations <<'PYTHON' \
    || fail "makemigrations wrote more than the upgrade should ask for (above)"
import importlib.util, os, sys
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scratchproject.settings")
sys.path.insert(0, os.getcwd())
import django

django.setup()
from django.db import migrations

allowed = (migrations.AlterField, migrations.AlterModelOptions)
bad = []
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("m", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for operation in module.Migration.operations:
        if not isinstance(operation, allowed):
            bad.append(f"{Path(path).name}: {operation.describe()}")
for line in bad:
    print(f"    unexpected operation: {line}", file=sys.stderr)
sys.exit(1 if bad else 0)
PYTHON
  for migration in $new_migrations; do
    name=$(basename "$migration" .py)
    sql=$(UPGRADE_PHASE=new "$venv_python" manage.py sqlmigrate scratch "$name" --skip-checks \
      | grep -v -e '^BEGIN;' -e '^COMMIT;' -e '^--' -e '^ *$' || true)
    if [ -n "$sql" ]; then
      printf '%s\n' "$sql" | sed 's/^/    sql | /'
      fail "migration scratch.$name changes the schema of the project's tables (above)"
    fi
  done
fi

echo "==> migrate on the checkout"
django migrate || fail "migrate exited non-zero"
echo "==> check"
django check || fail "manage.py check failed"
echo "==> check --deploy --database default"
django check --deploy --database default \
  || fail "manage.py check --deploy --database default failed"

echo "==> walking time forward on the checkout"
if ! UPGRADE_PHASE=new "$venv_python" manage.py upgrade_walk "$work/before.json" </dev/null \
  | tee "$work/walk.txt"; then
  grep -q " assertion(s) failed:$" "$work/walk.txt" \
    || fail "upgrade_walk stopped with an error (above)"
  while IFS= read -r line; do
    failures+=("walk ${line#    - }")
  done < <(sed -n '/ assertion(s) failed:$/,$p' "$work/walk.txt" | grep "^    - ")
fi
cd "$repo"

echo "==> $((SECONDS - started)) s"
if [ ${#failures[@]} -gt 0 ]; then
  echo "==> the upgrade from $tag FAILED:" >&2
  printf '    - %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "==> the upgrade from $tag kept every record's state: nothing lost, twice or early"
