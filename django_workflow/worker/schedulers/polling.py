"""The polling scheduler: django-q2 Schedules on each workflow's queue.

The works that share a ``check_interval`` and a queue are polled by one
Schedule, whatever their models: its task asks each model one indexed
question ("is a deadline due?") and fires only what is. One django-q2 task a
tick serves every model, so the worker's idle cost barely grows with the
number of models, and not at all with the number of deadlines.

Automatic steps are queued the moment a record enters them (one run per
step); their poll is the safety net: it queues a run of a step in which
records have waited longer than ``STEP_GRACE`` with no attempt under way.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.apps import apps
from django.db import router
from django.db.models import CharField, Exists, OuterRef, Q
from django.db.models.functions import Cast
from django.utils import timezone

from ...engine.firing import named, run_due, run_work
from ...engine.sql import probes
from ...model.columns import STATE_ENTERED_AT
from ...reading import attempts_read
from ...work import EntryWork, StepWork, Work
from ..transport import enqueue_steps
from .buffer_sweep import NAME as SWEEP
from .buffer_sweep import kick_off_sweeps, sweep_schedules
from .catalog import POLLING
from .scheduler import Scheduler

logger = logging.getLogger("django_workflow.schedulers.polling")  # as before 0.4

PREFIX = "workflow:"
POLL_TASK = "django_workflow.worker.schedulers.polling.poll_models"
#: How long a record may wait in an automatic step before its poll queues it again.
STEP_GRACE = timedelta(seconds=60)


class PollingScheduler(Scheduler):
    name = POLLING.name
    floor = POLLING.floor
    label = "polled"
    arranges = "schedules"

    def accepts(self, work: Work) -> bool:
        """Its own workflows' deadlines, and every automatic step's and effect's safety net."""
        if work.self_scheduled:
            return False
        return work.queued or work.scheduler == self.name

    def groups(self, works: list[Work]) -> dict[tuple[str, str], list[Work]]:
        """Works polled together: same check interval and queue, any model."""
        grouped: dict[tuple[str, str], list[Work]] = defaultdict(list)
        for work in works:
            if self.accepts(work):
                grouped[(work.check_interval, work.queue)].append(work)
        return dict(grouped)

    def sync(self, works: list[Work]) -> dict[str, int]:
        """Add, update and remove the django-q2 Schedules so they match ``works``.

        Every Schedule is due at once afterwards, so django-q2's first look at
        its Schedules (about 30 s in) polls each group even when ``kick_off``
        could not: what fell due while no worker ran, or before a new Schedule's
        first cron tick (up to an hour away for ``0 * * * *``), fires then, not
        at the tick. After that first poll django-q2 follows the cron.
        """
        from django_q.models import Schedule

        now = timezone.now()
        counts = {"added": 0, "updated": 0, "removed": 0, "unchanged": 0}
        wanted = {
            schedule_name(cron, queue): {
                "func": POLL_TASK,
                "args": repr((_by_model(group),)),
                "kwargs": repr({"q_options": {"cluster": queue}}),
                "schedule_type": Schedule.CRON,
                "cron": cron,
                "repeats": -1,
            }
            for (cron, queue), group in self.groups(works).items()
        }
        wanted.update(sweep_schedules(_sweep_name))  # the buffered events' sweeps, kept alike
        existing = {s.name: s for s in Schedule.objects.filter(name__startswith=PREFIX)}
        for name, values in wanted.items():
            schedule = existing.pop(name, None)
            if schedule is None:
                Schedule.objects.create(name=name, next_run=now, **values)
                counts["added"] += 1
            elif any(getattr(schedule, key) != value for key, value in values.items()):
                for key, value in values.items():
                    setattr(schedule, key, value)
                schedule.next_run = now
                schedule.save()
                counts["updated"] += 1
            else:
                counts["unchanged"] += 1
        for stale in existing.values():
            stale.delete()
            counts["removed"] += 1
        later = Schedule.objects.filter(name__in=list(wanted), next_run__gt=now)
        if later.exists():  # read first: on SQLite any UPDATE waits for every running write
            later.update(next_run=now)
        return counts

    def kick_off(self, works: list[Work], queues: list[str]) -> None:
        """Queue each group's poll of ``queues`` once, now the clusters run: django-q2's
        scheduler first looks at the Schedules about 30 s after a start. The same task
        as the Schedule's, through the broker, so a cluster's worker runs it with its
        time limit. Two workers starting together poll twice, and fire each due record
        once: firing claims the records it fires."""
        from django_q.tasks import async_task

        try:
            for (cron, queue), group in self.groups(works).items():
                if queue in queues:  # the others are polled at their own workers' start
                    options = {"cluster": queue, "group": schedule_name(cron, queue)}
                    async_task(POLL_TASK, _by_model(group), q_options=options)
            kick_off_sweeps(_sweep_name, queues)
        except Exception as error:  # a broker down now is down for every group
            logger.warning(
                "the first polls could not be queued (%s); the Schedules poll within about 30 s",
                error,
            )


def _by_model(works: list[Work]) -> dict[str, list[str]]:
    by_model: dict[str, list[str]] = {}
    for work in works:
        by_model.setdefault(work.model_label, []).append(work.name)
    return by_model


def _sweep_name(queue: str) -> str:
    return schedule_name(SWEEP, queue)


def schedule_name(cron: str, queue: str) -> str:
    """A stable, durable key for one polling group (django-q2 allows 100 characters)."""
    name = f"{PREFIX}{queue}:{cron}"
    if len(name) <= 100:
        return name
    digest = hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:12]
    return f"{PREFIX}{queue[:70]}:{digest}"


def poll_models(by_model: dict[str, list[str]]) -> dict[str, dict[str, int]]:
    """The Schedule's task: ``poll`` each model in turn. One model's failure is logged
    and does not keep the others from their poll; the task then fails with it."""
    fired, failure = {}, None
    for model_label, work_names in by_model.items():
        try:
            fired[model_label] = poll(model_label, work_names)
        except Exception as error:
            logger.exception("poll %s failed", model_label)
            failure = failure or error
    if failure is not None:
        raise failure
    return fired


def poll(model_label: str, work_names: list[str], now: datetime | None = None) -> dict[str, int]:
    """The Schedule's task: the automatic steps' safety net, then every due deadline.

    Deadlines are found through ``next_due_at`` alone, so a poll fires whatever
    deadline of the model is due, also those of a group checked less often.
    """
    model, steps, deadlines, effects = _polled(model_label, tuple(work_names))
    now = now or timezone.now()
    fired = {}
    if steps:
        db = router.db_for_write(model)
        waiting = probes.due(model, steps, now, db)
        fired = {work.name: queue_waiting_steps(model, work, now, db) for work in waiting}
    if deadlines:
        fired.update(run_due(model, deadlines, now=now))
    for work in effects:
        fired[work.name] = run_work(model, work.name, now=now)
    return {name: count for name, count in fired.items() if count}


@cache
def _polled(model_label: str, work_names: tuple[str, ...]) -> tuple[Any, ...]:
    """What a Schedule's poll of one model reads: the model, its automatic steps and
    effects among ``work_names``, and all its deadlines when any is among them (a poll
    fires whatever deadline is due). Read once per process: a tick is mostly this and
    one lookup."""
    model = apps.get_model(model_label)
    works = [model.workflow.work(name) for name in work_names]
    steps = [work for work in works if isinstance(work, StepWork)]
    effects = [work for work in works if isinstance(work, EntryWork)]
    if all(work.queued for work in works):
        return model, steps, [], effects
    deadlines = [
        work
        for version in model.workflow.family()
        for works in version.deadline_works.values()
        for work in works
    ]
    return model, steps, deadlines, effects


def queue_waiting_steps(model: Any, work: Work, now: datetime, db: str, limit: int = 1000) -> int:
    """Queue a run of the step when records waited in it past the grace with no attempt
    running, backing off or halted (up to ``limit`` are counted and named): the query
    leaves those out, so however many records are halted, the ones waiting are reached.
    A record whose retry is due is queued at the first poll from its ``retry_at`` (what
    the admin and the log announce), grace or not: its failed attempt left no task in
    flight."""
    attempts = attempts_read.rows(model, db).filter(
        work=work.name,
        object_id=Cast(OuterRef("pk"), CharField()),
        round_key=OuterRef(STATE_ENTERED_AT),
    )
    busy = attempts.filter(
        Q(halted=True) | Q(retry_at__gt=now) | Q(running_since__isnull=False, alive_until__gt=now)
    )
    retry_due = attempts.filter(retry_at__lte=now, running_since__isnull=True, halted=False)
    rows = probes.matching(model, work, now, db).filter(
        Q(**{f"{STATE_ENTERED_AT}__lte": now - STEP_GRACE}) | Exists(retry_due)
    )
    waiting = list(rows.exclude(Exists(busy)).values_list("pk", flat=True)[:limit])
    if waiting:  # one run takes them all, and whatever else waits in the step
        logger.info("%s: %s queued again for %s", model._meta.label, work.name, named(waiting))
        enqueue_steps(model, work.step)
    return len(waiting)
