"""``manage.py check`` reads declarations and settings only: it imports no module that
runs work (the engine, firing, django-q2's cluster), so checking stays cheap and a
broken runtime cannot hide a declaration's error (docs/decisions.md, the rooms)."""

import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

#: Modules that run work; a check needs none of them.
RUNTIME = ("django_workflow.engine", "django_q.cluster")

SETTINGS = ["tests.settings", "example_project.settings"]


def run_check(settings, *python_args):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings}
    result = subprocess.run(
        [sys.executable, *python_args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def runtime_among(modules):
    return sorted(
        module
        for module in modules
        if any(module == name or module.startswith(f"{name}.") for name in RUNTIME)
    )


@pytest.mark.parametrize("settings", SETTINGS)
def test_check_imports_no_runtime_module(settings):
    result = run_check(settings, "-X", "importtime", "-m", "django", "check")
    imported = [
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    assert "django_workflow.checks" in imported  # the checks ran, so the list is complete
    assert runtime_among(imported) == []


# -X importtime lists only modules imported by an import statement; Django loads the
# apps' models and admin modules through importlib, so the loaded modules are asked too.
LOADED_AFTER_CHECK = (
    "import sys; from django.core.management import execute_from_command_line; "
    "execute_from_command_line(['manage.py', 'check']); print(*sys.modules, sep='\\n')"
)


@pytest.mark.parametrize("settings", SETTINGS)
def test_no_runtime_module_is_loaded_once_check_has_run(settings):
    result = run_check(settings, "-c", LOADED_AFTER_CHECK)
    loaded = result.stdout.splitlines()
    assert "django_workflow.checks" in loaded
    assert runtime_among(loaded) == []
