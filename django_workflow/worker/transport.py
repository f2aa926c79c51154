"""Queueing automatic steps and ``on_enter`` effects, and the tasks that run them in a
worker of the transport in use (``transports``: django-q2, Django's tasks or Celery).

The engine does not import this module: it announces every entry into a
step (``entered_step``), and ``queue_entered`` queues the step's work after
commit when the step is automatic: one run per step, not per record, and only
when none is queued or running already. Nor does this module import the engine
or firing on import (only the tasks that run them do): the app connects its
receivers while Django loads, ``manage.py check`` included.

What the admin shows and does about an automatic step's attempts is in
``halted_steps``; how a worker process takes a stop, in ``stop_signals``.
"""

from __future__ import annotations

import logging
import math
import signal
import threading
from typing import Any

from django.apps import apps
from django.db import router

from ..conf import workflow_settings
from ..errors import TimeLimitExceeded
from ..process import traces
from ..process.pacing import paced
from ..work import names
from . import transports
from .transports import Queued

TASK = "django_workflow.worker.transport.run_automatic_step"
STEPS_TASK = "django_workflow.worker.transport.run_automatic_steps"
ENTRY_TASK = "django_workflow.worker.transport.run_entry"

logger = logging.getLogger("django_workflow.queueing")  # as before 0.4


def queue_entered(sender: Any, pk: Any, step: str, **kwargs: Any) -> None:
    """Receiver of ``entered_step``: queue the step's ``on_enter`` and, when the step is
    automatic, its action. (Polls find both too, should a task be lost.)"""
    workflow = sender.workflow
    declared = workflow.steps.get(step)
    if declared is None or not workflow_settings.ENQUEUE_AUTOMATIC_STEPS:
        return
    if declared.on_enter is not None:
        _queue_or_leave_to_the_poll(enqueue_entry, sender, pk, step, "on_enter")
    if declared.is_automatic:
        _queue_or_leave_to_the_poll(enqueue_entered_step, sender, pk, step, "action")


def _queue_or_leave_to_the_poll(enqueue: Any, model: Any, pk: Any, step: str, what: str) -> None:
    # The move has committed: a broker that cannot be reached must not reach its caller
    # as an error (it would retry a move that happened). The poll finds the work.
    try:
        enqueue(model._meta.label, pk, step, model.workflow.queue)
    except Exception as error:
        from ..errors import error_summary

        logger.warning(
            "%s %s: the %s of step %r could not be queued (%s); the next poll runs it",
            *(model._meta.label, pk, what, step, error_summary(error)),
        )


def enqueue_entry(model_label: str, pk: Any, step: str, queue: str) -> None:
    """Queue a step's ``on_enter`` for one record; the worker runs ``run_entry``."""
    name = f"workflow:{model_label}:{step}.on_enter:{pk}"
    transports.enqueue(Queued(ENTRY_TASK, (model_label, pk, step), queue, name))


def _database(model_label: str, *args: Any) -> str:
    return router.db_for_write(apps.get_model(model_label))


@traces.task
@paced(_database)
def run_entry(model_label: str, pk: Any, step: str) -> int:
    """The django-q2 task of ``Step(on_enter=...)``: run what the record owes for its
    entries into ``step``, even if it has moved on since; how many effects committed."""
    from ..engine.effects import run_for_record

    return run_for_record(apps.get_model(model_label), pk, step)


def enqueue_step(model_label: str, pk: Any, step: str, queue: str) -> None:
    """Queue an automatic step for one record; the worker runs ``run_automatic_step``.

    A step's ``time_limit`` becomes the task's timeout where the transport has one: it
    interrupts the action past it, and the attempt counts as failed.
    """
    work = apps.get_model(model_label).workflow.newest_work(names.step_work(step))
    timeout = None
    if work.time_limit is not None:
        timeout = math.ceil(work.time_limit.total_seconds())
    name = f"workflow:{model_label}:{step}:{pk}"
    transports.enqueue(Queued(TASK, (model_label, pk, step), queue, name, timeout))


def enqueue_entered_step(model_label: str, pk: Any, step: str, queue: str) -> None:
    """A record entered automatic step ``step``: queue a run of the step unless one is
    queued or running already (it finds the record: the records table is the queue)."""
    from ..engine import steps

    model = apps.get_model(model_label)
    if steps.want_run(model, step):
        _enqueue_run(model, step, queue)


def enqueue_steps(model: Any, step: str) -> None:
    """Queue a run of automatic step ``step`` whether or not one is queued (the poll's
    safety net: the queued one may have been lost)."""
    from ..engine import steps

    steps.queued_anyway(model, step)
    _enqueue_run(model, step, model.workflow.queue)


def _enqueue_run(model: Any, step: str, queue: str) -> None:
    """Queue ``run_automatic_steps``; the mark is given back when the broker refuses it.

    Its timeout covers the run's budget and one action's ``time_limit`` on top;
    each action is held to its ``time_limit`` by the run itself.
    """
    from ..engine import steps

    work = model.workflow.newest_work(names.step_work(step))
    timeout = None
    if work.time_limit is not None:
        timeout = math.ceil(steps.BUDGET + work.time_limit.total_seconds()) + 5
    label = model._meta.label
    try:
        queued = Queued(STEPS_TASK, (label, step), queue, f"workflow:{label}:{step}", timeout)
        transports.enqueue(queued)
    except Exception:
        steps.not_queued(model, step)
        raise


@traces.task
def run_automatic_steps(model_label: str, step: str) -> int:
    """The django-q2 task of an automatic step: run the records waiting in it, a turn per
    record on SQLite, and queue a follow-up when some are left; how many moved on."""
    from ..engine import steps

    model = apps.get_model(model_label)
    moved, more = steps.run_queued(model, step)
    if more:
        _enqueue_run(model, step, model.workflow.queue)
    return moved


@traces.task
@paced(_database)
def run_automatic_step(model_label: str, pk: Any, step: str) -> str | None:
    """The django-q2 task for one record's automatic step (an interrupted attempt
    recovered, a halted one retried); see ``engine.run_step``."""
    from ..engine import run_step

    _time_limit_raises_our_error()
    return run_step(apps.get_model(model_label), pk, step)


def _time_limit_raises_our_error() -> None:
    # django-q2 arms SIGALRM for the task's timeout and raises its own SystemExit
    # subclass, which would read as a stop; the engine counts ours as a failed attempt.
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None):
        return

    def raise_time_limit(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded("the action ran past its time limit")

    signal.signal(signal.SIGALRM, raise_time_limit)
