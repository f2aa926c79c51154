"""Django's own tasks (``django.tasks``, from Django 6.0; the ``django-tasks`` package
before): one task, ``run``, on the backend ``DJANGO_WORKFLOW["TASKS_BACKEND"]`` names,
in the queue named by the workflow's ``queue`` (the backend must list it in ``QUEUES``).

``django.tasks`` has no timeout: a step's ``time_limit`` is held by the run itself, as
under every transport. This module is imported only when the transport is in use: the
task is built when it loads, from the backend's settings.
"""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string

from ...conf import workflow_settings

#: ``django.tasks`` does not stop a task past a time limit.
TIMEOUT = False
REQUIRES = "django.tasks or django_tasks"


def tasks_module() -> Any:
    """``django.tasks`` where Django has it, else the ``django-tasks`` package."""
    try:
        import django.tasks as tasks  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        import django_tasks as tasks  # type: ignore[import-not-found,no-redef,unused-ignore]
    return tasks


def run(task: str, *args: Any, **context: Any) -> Any:
    """The workflow's task as the transport's worker runs it: the callable at ``task``.
    (The worker finds the task by this function's path: the name it is stored under.)"""
    return import_string(task)(*args, **context)


run = tasks_module().task(backend=workflow_settings.TASKS_BACKEND)(run)  # type: ignore[assignment]


def enqueue(queued: Any) -> None:
    run.using(queue_name=queued.queue).enqueue(queued.task, *queued.args, **queued.context)
