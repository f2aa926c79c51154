"""Paths of release 0.3 still import after the rooms of release 0.4 (docs/upgrading.md):
django-q2 keeps queued tasks' and schedules' functions as dotted paths in its tables,
and projects may import what they found."""

import importlib
import importlib.util
import pydoc
import sys
import warnings
from pathlib import Path

import pytest
from django_q.models import Schedule

from django_workflow import moved
from django_workflow.model.registry import workflow_models
from django_workflow.worker.schedulers.polling import POLL_TASK, PollingScheduler

#: The functions release 0.3 stored in django-q2's tables, and what runs them now.
STORED_FUNCTIONS = {
    "django_workflow.queueing.run_automatic_step": "django_workflow.worker.transport",
    "django_workflow.queueing.run_automatic_steps": "django_workflow.worker.transport",
    "django_workflow.queueing.run_entry": "django_workflow.worker.transport",
    "django_workflow.schedulers.polling.poll_models": "django_workflow.worker.schedulers.polling",
    "django_workflow.schedulers.buffer_sweep.sweep_buffered": (
        "django_workflow.worker.schedulers.buffer_sweep"
    ),
}


def _forget(path):
    """Import ``path`` afresh: drop it from the module cache and from its parent."""
    sys.modules.pop(path, None)
    parent, _, name = path.rpartition(".")
    if parent in sys.modules and name in vars(sys.modules[parent]):
        delattr(sys.modules[parent], name)


@pytest.mark.parametrize("path", sorted(STORED_FUNCTIONS))
def test_a_stored_task_path_finds_its_function_silently(path):
    for module in ("django_workflow.queueing", "django_workflow.schedulers"):
        _forget(module)
    _forget(path.rpartition(".")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = pydoc.locate(path)  # how django-q2's worker finds a task's function
    where_now = importlib.import_module(STORED_FUNCTIONS[path])
    assert found is getattr(where_now, path.rpartition(".")[2])


@pytest.mark.parametrize("old", sorted(set(moved.MOVED) - moved.STORED - moved.SHADOWED))
def test_an_old_path_is_the_module_now_and_warns(old):
    _forget(f"django_workflow.{old}")
    with pytest.warns(DeprecationWarning, match=f"django_workflow.{moved.MOVED[old]}"):
        module = importlib.import_module(f"django_workflow.{old}")
    assert module is importlib.import_module(f"django_workflow.{moved.MOVED[old]}")


def test_every_new_path_exists_and_no_old_path_still_does():
    package = importlib.import_module("django_workflow").__path__[0]
    for old, new in moved.MOVED.items():
        assert importlib.util.find_spec(f"django_workflow.{new}") is not None, new
        old_file = Path(package, *old.split("."))
        assert not old_file.with_suffix(".py").exists() and not old_file.is_dir(), old


def test_the_old_inbox_module_leaves_the_inbox_function_in_place():
    from django_workflow.inbox import inbox  # release 0.3's path

    import django_workflow

    assert inbox is django_workflow.inbox
    assert callable(django_workflow.inbox) and django_workflow.inbox.__name__ == "inbox"


def test_a_path_that_never_was_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("django_workflow.nowhere")


@pytest.mark.django_db
def test_a_schedule_of_release_3_is_moved_to_the_new_path_when_the_worker_syncs():
    works = [work for model in workflow_models() for work in model.workflow.works]
    scheduler = PollingScheduler()
    scheduler.sync(works)
    Schedule.objects.filter(func=POLL_TASK).update(
        func="django_workflow.schedulers.polling.poll_models"  # as release 3 stored it
    )
    counts = scheduler.sync(works)
    assert counts["updated"] == Schedule.objects.filter(func=POLL_TASK).count() > 0
    assert not Schedule.objects.filter(func__startswith="django_workflow.schedulers.").exists()
