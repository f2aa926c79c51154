"""Celery: one task, ``django_workflow.run``, registered on the app
``DJANGO_WORKFLOW["CELERY_APP"]`` names (``"proj.celery:app"``), sent to the queue named
by the workflow's ``queue`` with ``acks_late``: a worker killed mid-task leaves it to be
delivered again, and the attempt row makes the second delivery find the work done or
interrupted, never run twice."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.utils.module_loading import import_string

from ...conf import workflow_settings

#: Celery stops a task past its ``time_limit`` (the worker process is replaced).
TIMEOUT = True
REQUIRES = "celery"
TASK_NAME = "django_workflow.run"


@cache
def app() -> Any:
    """The Celery app ``CELERY_APP`` names, the workflow's task registered on it."""
    path = str(workflow_settings.CELERY_APP).replace(":", ".")
    celery_app = import_string(path)
    celery_app.task(name=TASK_NAME, acks_late=True, reject_on_worker_lost=True)(_run)
    return celery_app


def _run(task: str, *args: Any, **context: Any) -> Any:
    return import_string(task)(*args, **context)


def enqueue(queued: Any) -> None:
    options: dict[str, Any] = {"queue": queued.queue}
    if queued.timeout is not None:
        options["time_limit"] = queued.timeout
    app().send_task(TASK_NAME, args=[queued.task, *queued.args], kwargs=queued.context, **options)
