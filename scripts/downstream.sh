#!/usr/bin/env bash
# The package as a new user gets it: the wheel and the sdist built from the checkout, the
# wheel installed in a fresh virtualenv (Python 3.12, Django 6.1), a project made by
# `django-admin startproject` outside the checkout with an app declaring workflows through
# the public API only (scripts/downstream/), its tests run by pytest-django and by
# `manage.py test`, migrations, `check --deploy`, collectstatic, a real `workflow_worker`
# against the SQLite file, and the sdist installed in the same virtualenv.
# Exits non-zero on the first failure; the temporary directories go with the script.
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
cd "$checkout"
source scripts/venv.sh

# Nothing of the caller's Python set-up may reach the project (a checkout on PYTHONPATH
# would hide the installed package).
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTHONUSERBASE DJANGO_SETTINGS_MODULE VIRTUAL_ENV
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

started=$SECONDS
work=$(mktemp -d /tmp/downstream.XXXXXX)
worker_pid=""

cleanup() {
  local status=$?
  if [ -n "$worker_pid" ] && kill -0 "$worker_pid" 2>/dev/null; then
    # The worker was started in a process group of its own (setsid): stop all of it.
    kill -TERM -- "-$worker_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$worker_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$worker_pid" 2>/dev/null || true
  fi
  if [ -n "${DOWNSTREAM_KEEP:-}" ]; then
    echo "==> kept $work (DOWNSTREAM_KEEP)" >&2
  else
    rm -rf "$work"
  fi
  if [ $status != 0 ]; then
    echo "==> downstream: FAILED after $((SECONDS - started)) s" >&2
  fi
  exit $status
}
trap cleanup EXIT

mkdir -p "$work/logs" "$work/dist"

# logged NAME COMMAND...: run COMMAND, its output in a log shown only when it fails.
logged() {
  local log="$work/logs/$1"
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "FAILED: $*" >&2
    grep -v "^WARNING: Location" "$log" | tail -n 80 >&2
    return 1
  fi
}

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

python=$(find_python 3.12)

echo "==> snapshot of the work tree (tracked and untracked files, nothing ignored)"
src="$work/src"
mkdir -p "$src"
# Built from a copy: setuptools writes build/ and *.egg-info beside the sources, and a
# build/ left from an earlier build could put files the checkout no longer has in the wheel.
git ls-files -z --cached --others --exclude-standard \
  | tar --null -T - --ignore-failed-read -cf - 2>/dev/null \
  | tar -C "$src" -xf -

echo "==> building the wheel (pip wheel) and the sdist (build, in a throw-away virtualenv)"
logged buildenv "$python" -m venv "$work/buildenv"
logged build-install "$work/buildenv/bin/python" -m pip install build
logged sdist "$work/buildenv/bin/python" -m build --sdist --outdir "$work/dist" "$src"
logged wheel "$work/buildenv/bin/python" -m pip wheel --no-deps -w "$work/dist" "$src"
wheel=$(ls "$work"/dist/dj_workflow-*.whl)
sdist=$(ls "$work"/dist/dj_workflow-*.tar.gz)
echo "    $(basename "$wheel"), $(basename "$sdist")"

echo "==> a fresh virtualenv: the wheel, Django 6.1, pytest, pytest-django, time-machine"
venv="$work/venv"
logged venv "$python" -m venv "$venv"
logged install "$venv/bin/python" -m pip install "$wheel" "Django>=6.1,<6.2" \
  pytest pytest-django time-machine
logged pip-check "$venv/bin/python" -m pip check
echo "==> django-admin startproject, outside the checkout"
project="$work/project"
mkdir -p "$project"
templates="$checkout/scripts/downstream"
cd "$project"
"$venv/bin/django-admin" startproject config .
cp -r "$templates/shop" shop
cp "$templates/pytest.ini" .
cp "$templates/config/settings_test.py" config/
printf "\n" >>config/settings.py
cat "$templates/config/settings_tail.py" >>config/settings.py
printf "\n" >>config/urls.py
cat "$templates/config/urls_tail.py" >>config/urls.py
find . -name __pycache__ -prune -exec rm -rf {} +
py="$venv/bin/python"

location=$("$py" -c "import django_workflow; print(django_workflow.__file__)")
purelib=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "    django_workflow imported from $location"
case "$location" in
  "$purelib"/django_workflow/*) ;;
  *) fail "django_workflow is imported from $location, not from $purelib" ;;
esac
case "$location" in "$checkout"/*) fail "django_workflow is imported from the checkout" ;; esac
# Read from the project's directory: run from the checkout, Python would also find the
# checkout's own dj_workflow.egg-info.
"$py" - "$(basename "$wheel")" <<'PYTHON'
import importlib.metadata as metadata
import sys

import django

wheel_version = sys.argv[1].split("-")[1]
assert django.VERSION[:2] == (6, 1), django.__version__
installed = metadata.version("dj-workflow")
assert installed == wheel_version, f"dj-workflow {installed} installed, the wheel is {wheel_version}"
print(f"    dj-workflow {installed}, django-q2 {metadata.version('django-q2')}, Django {django.__version__}")
PYTHON

echo "==> manage.py check, makemigrations (the app's initial migration), makemigrations --check"
"$py" manage.py check
"$py" manage.py makemigrations shop
[ -f shop/migrations/0001_initial.py ] || fail "makemigrations wrote no shop/migrations/0001_initial.py"
"$py" manage.py makemigrations --check --dry-run

echo "==> the app's tests under pytest (pytest-django's defaults: an in-memory SQLite database)"
"$venv/bin/pytest" -q -p no:cacheprovider | tee "$work/logs/pytest"

echo "==> the same tests under Django's runner (manage.py test)"
# Its output (django-q2's sync lines, the workflow's WARNING lines) is shown when it fails.
logged manage-test "$py" manage.py test --settings=config.settings_test --noinput -v 1
grep -E "^(Ran [0-9]+ tests?|OK)" "$work/logs/manage-test" | sed 's/^/    /'
by_pytest=$(grep -oE "^[0-9]+ passed" "$work/logs/pytest" | cut -d" " -f1)
by_django=$(grep -oE "^Ran [0-9]+ test" "$work/logs/manage-test" | cut -d" " -f2)
[ "$by_pytest" = "$by_django" ] || fail "pytest passed $by_pytest tests, manage.py test ran $by_django"

echo "==> manage.py migrate, check --deploy (warnings allowed, errors fail), collectstatic"
logged migrate "$py" manage.py migrate --noinput
deploy_status=0
"$py" manage.py check --deploy >"$work/logs/deploy" 2>&1 || deploy_status=$?
deploy_ids=$(grep -oE "^[^ ]+: \([a-z_.]+\.[EWCI][0-9]+\)" "$work/logs/deploy" \
  | grep -oE "[a-z_.]+\.[EWCI][0-9]+" | sort -u | paste -sd " " -) || true
echo "    check --deploy: ${deploy_ids:-no issues}"
[ "$deploy_status" = 0 ] || { cat "$work/logs/deploy" >&2; fail "check --deploy exited $deploy_status"; }
logged collectstatic "$py" manage.py collectstatic --noinput
for file in django_workflow/workflow.css django_workflow/log.css django_workflow/diagram.js \
  admin/css/base.css; do
  [ -s "collected-static/$file" ] || fail "collectstatic did not collect $file"
done

echo "==> workflow_worker against the SQLite file moves records created before it started"
# An application to screen (a chain of three automatic steps, then an on_enter effect) and
# a proposal whose reminder fell due an hour before the worker starts.
logged create "$py" manage.py shell -v 0 -c "
from datetime import timedelta
import time_machine
from django.utils import timezone
from shop.models import Application, Proposal
Application.objects.create(applicant='Ada Lovelace')
with time_machine.travel(timezone.now() - timedelta(hours=3)):
    Proposal.objects.create(title='New roof').submit()
"
setsid "$py" manage.py workflow_worker >"$work/logs/worker" 2>&1 &
worker_pid=$!
moved=0
WORKER_PID=$worker_pid "$py" manage.py shell -v 0 -c "
import os, sys, time
from shop.models import Application, Proposal
deadline = time.monotonic() + 60
while True:
    application = Application.objects.get()
    proposal = Proposal.objects.get()
    done = (
        application.current_step == 'interview'
        and application.panel_notified == 1
        and proposal.reminders == 1
    )
    if done or time.monotonic() > deadline:
        break
    try:
        os.kill(int(os.environ['WORKER_PID']), 0)
    except ProcessLookupError:
        print('    the worker died')
        break
    time.sleep(0.25)
print(f'    application: {application.current_step}, panel notified {application.panel_notified}; '
      f'proposal: {proposal.current_step}, {proposal.reminders} reminder(s)')
print('    ' + ', '.join(f'{r.from_state}->{r.to_state} {r.triggered_by}' for r in application.history()))
sys.exit(0 if done else 1)
" || moved=$?
kill -0 "$worker_pid" 2>/dev/null || {
  cat "$work/logs/worker" >&2
  worker_pid=""
  fail "the worker died on its own"
}
if [ "$moved" != 0 ]; then
  cat "$work/logs/worker" >&2
  fail "the worker did not move the records within 60 s"
fi
kill -TERM "$worker_pid"
for _ in $(seq 200); do kill -0 "$worker_pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$worker_pid" 2>/dev/null && { cat "$work/logs/worker" >&2; fail "the worker did not stop within 40 s of SIGTERM"; }
worker_status=0
wait "$worker_pid" || worker_status=$?
worker_pid=""
if [ "$worker_status" != 0 ]; then
  cat "$work/logs/worker" >&2
  fail "the worker exited $worker_status on SIGTERM"
fi
if grep -q "Traceback" "$work/logs/worker"; then
  cat "$work/logs/worker" >&2
  fail "the worker logged a traceback"
fi
echo "    stopped by SIGTERM, exit status 0"

echo "==> the sdist installs in the same virtualenv and carries what the wheel does"
logged sdist-install "$py" -m pip install --no-deps --force-reinstall "$sdist"
"$py" - "$wheel" <<'PYTHON'
import importlib.metadata as metadata
import sys
import zipfile

import django_workflow

wheel = {n for n in zipfile.ZipFile(sys.argv[1]).namelist() if ".dist-info/" not in n}
installed = {
    str(f) for f in metadata.files("dj-workflow")
    if ".dist-info/" not in str(f) and "__pycache__" not in str(f) and not str(f).startswith("..")
}
assert wheel == installed, (
    f"built from the sdist, the package differs from the wheel: only in the wheel "
    f"{sorted(wheel - installed)}, only from the sdist {sorted(installed - wheel)}"
)
print(f"    {len(installed)} files, as in the wheel; imported from {django_workflow.__file__}")
PYTHON
"$py" manage.py check
"$venv/bin/pytest" -q -p no:cacheprovider shop/tests/test_installed.py shop/tests/test_web.py

echo "==> downstream: all passed in $((SECONDS - started)) s"
