"""Transports: what carries queued work (an automatic step's run, an ``on_enter``) to a
worker process: django-q2 (the default), Django's own tasks, or Celery.

Whatever the transport, due instants stay in the workflow's own tables and
``manage.py workflow_worker`` polls and fires them: a transport carries only the work
queued as records enter steps, after commit, and a task it loses is found by the next
poll. Each transport is a module here with ``enqueue(queued)`` and what it can honour
(``TIMEOUT``: it stops a task past its time limit); ``DJANGO_WORKFLOW["TRANSPORT"]``
names the one in use (docs: transports).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from ...conf import workflow_settings
from ...process import traces

#: ``DJANGO_WORKFLOW["TRANSPORT"]`` values and the module of each.
TRANSPORTS = {
    "django_q": "django_workflow.worker.transports.django_q",
    "django_tasks": "django_workflow.worker.transports.django_tasks",
    "celery": "django_workflow.worker.transports.celery",
}


@dataclass(frozen=True)
class Queued:
    """One task to queue: the dotted path of the callable to run in the worker, its
    arguments (plain values), the workflow's ``queue``, a readable name, the seconds
    after which the transport should stop it (``None``: none), and the keywords that
    carry the trace context (``traces.carried``)."""

    task: str
    args: tuple[Any, ...]
    queue: str
    name: str
    timeout: int | None = None
    context: dict[str, Any] = field(default_factory=traces.carried)


def current() -> Any:
    """The module of the transport ``DJANGO_WORKFLOW["TRANSPORT"]`` names."""
    name = workflow_settings.TRANSPORT
    if name not in TRANSPORTS:
        raise LookupError(
            f"DJANGO_WORKFLOW['TRANSPORT'] is {name!r}; it is one of {', '.join(TRANSPORTS)}."
        )
    return import_module(TRANSPORTS[name])


def prepare() -> None:
    """What the transport in use needs while Django loads: Celery's task registered on
    the app, so a Celery worker knows it. One that cannot load is the checks' to report."""
    if workflow_settings.TRANSPORT != "celery":
        return
    try:
        current().app()
    except Exception:  # E084/E085 say why
        return


def enqueue(queued: Queued) -> None:
    """Hand ``queued`` to the transport in use; raises what its broker raises."""
    current().enqueue(queued)
