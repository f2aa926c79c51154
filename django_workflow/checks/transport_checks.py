"""The transport that carries queued work (E083 to E086): named, installed, configured.

Run with every whole-project check that has workflow models: a worker or a web process
started on a transport that cannot queue would leave every automatic step to the polls.
"""

from __future__ import annotations

from importlib.util import find_spec

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from ..conf import workflow_settings
from ..worker.transports import TRANSPORTS


def check_transport() -> list[checks.CheckMessage]:
    name = workflow_settings.TRANSPORT
    if name not in TRANSPORTS:
        return [
            _error(
                f"DJANGO_WORKFLOW['TRANSPORT'] is {name!r}, which is no transport.",
                f"Use one of {', '.join(map(repr, TRANSPORTS))} (docs: transports).",
                "E083",
            )
        ]
    if name == "django_tasks":
        return _check_django_tasks()
    if name == "celery":
        return _check_celery()
    return []


def _check_django_tasks() -> list[checks.CheckMessage]:
    if not (find_spec("django.tasks") or find_spec("django_tasks")):
        return [
            _missing("django_tasks", "Django 6.0 or later, or `pip install dj-workflow[tasks]`")
        ]
    backend = workflow_settings.TASKS_BACKEND
    configured = getattr(settings, "TASKS", None) or {"default": {}}
    if backend not in configured:
        return [
            _error(
                f"DJANGO_WORKFLOW['TASKS_BACKEND'] is {backend!r}, which TASKS does not configure.",
                f"Name one of TASKS' backends ({', '.join(map(repr, configured))}), or add "
                f"{backend!r} to TASKS.",
                "E086",
            )
        ]
    return []


def _check_celery() -> list[checks.CheckMessage]:
    if not find_spec("celery"):
        return [_missing("celery", "`pip install dj-workflow[celery]`")]
    path = workflow_settings.CELERY_APP
    try:
        app = import_string(str(path).replace(":", "."))
    except Exception as error:
        return [
            _error(
                f"DJANGO_WORKFLOW['CELERY_APP'] is {path!r}, which does not import: {error!r}.",
                "Name the Celery app as 'module:attribute', e.g. 'proj.celery:app'.",
                "E085",
            )
        ]
    if not hasattr(app, "send_task"):
        return [
            _error(
                f"DJANGO_WORKFLOW['CELERY_APP'] is {path!r}, which is not a Celery app.",
                "Name the Celery app as 'module:attribute', e.g. 'proj.celery:app'.",
                "E085",
            )
        ]
    return []


def _missing(name: str, how: str) -> checks.Error:
    return _error(
        f"DJANGO_WORKFLOW['TRANSPORT'] is {name!r}, but its package is not installed.",
        f"Install it: {how}.",
        "E084",
    )


def _error(message: str, hint: str, code: str) -> checks.Error:
    return checks.Error(message, hint=hint, id=f"django_workflow.{code}")
