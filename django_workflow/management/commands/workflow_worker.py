"""``manage.py workflow_worker``: run every workflow's work.

Computes the stored due instants again where the declaration of deadlines
changed, syncs every scheduler of the registry (the polling Schedules), then
runs a django-q2 cluster per workflow queue, kicks each scheduler off once they
run (the first polls, queued at once) and runs what the schedulers run beside
them (the timeline, when a workflow uses the precise scheduler).
SIGTERM and Ctrl-C stop it cleanly: running actions finish within
``SHUTDOWN_GRACE`` seconds, or are released for another worker. ``--once``
runs everything due now and exits, for cron-driven deployments and tests.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import router

from ...checks.evolution_checks import waiting_migrations
from ...engine.firing import run_due_work
from ...engine.rescheduling import catch_up
from ...model.registry import workflow_models
from ...process.pacing import pace_every_write
from ...worker.schedulers import Scheduler, all_works, loaded
from ...worker.supervisor import Supervisor

#: The worker's lines and django-q2's, like
#: ``2026-11-30 05:40:12,123 WARNING django_workflow.engine: ...`` (the process's local
#: time, which Django sets to ``TIME_ZONE``).
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: django-q2's logger (its name is fixed; ``Q_CLUSTER["name"]`` does not change it).
QUEUE_LOGGER = "django-q"


#: How often a worker started before ``migrate`` looks again, in seconds.
MIGRATE_WAIT = 2.0


class Command(BaseCommand):
    help = "Run the workflow worker: polling Schedules, the django-q2 cluster and the timeline."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="Run all due work once and exit.")
        parser.add_argument(
            "--queue",
            action="append",
            dest="queues",
            help="Run a cluster for this queue only (repeatable). Default: every workflow queue.",
        )
        parser.add_argument(
            "--no-timeline", action="store_true", help="Do not run the precise timeline here."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        configure_logging(options["verbosity"], self.stdout)
        pace_every_write()
        self._wait_for_migrate(options["once"])
        works, schedulers = all_works(), loaded()
        self._summary(works, schedulers)
        for label, count in catch_up(workflow_models()).items():
            if count:  # a first start usually finds every instant already right
                self.say(f"{label}: deadlines changed; {count} due instant(s) moved")
        if options["once"]:
            fired = run_due_work()  # each firing is logged with the records it fired for
            for work, count in fired.items():  # what cron mails its users
                self.say(f"{work}: {count} fired")
            self.say(f"done: {sum(fired.values())} fired")
            return
        queues = options["queues"] or sorted({work.queue for work in works})
        supervisor = Supervisor(
            queues, works, not options["no_timeline"], say=self.say
        )  # a stop from now on stops the worker cleanly, even before its clusters run
        self._sync(works, schedulers)
        self._run(supervisor)

    def say(self, message: str) -> None:
        """A line of the worker's own, out at once: under systemd, a container runtime
        or a file, stdout is block-buffered and a line could wait there for hours."""
        self.stdout.write(message)
        self.stdout.flush()

    def _run(self, supervisor: Supervisor) -> None:
        healthy = supervisor.run()
        self.say("stopped")
        if not healthy:
            sys.exit(1)

    def _sync(self, works: list[Any], schedulers: list[Scheduler]) -> None:
        for scheduler in schedulers:
            counts = scheduler.sync(works)
            if scheduler.arranges:
                said = ", ".join(f"{k} {v}" for k, v in counts.items())
                self.say(f"{scheduler.arranges}: {said}")

    def _wait_for_migrate(self, once: bool) -> None:
        """New code started before ``migrate`` (a rolling deploy) waits for it: its models
        would read columns that do not exist yet. ``--once`` runs nothing and fails."""
        waiting = unapplied(workflow_models())
        if not waiting:
            return
        said = f"{len(waiting)} migration(s) not applied yet ({', '.join(waiting[:3])}"
        said += ", …)" if len(waiting) > 3 else ")"
        if once:
            raise CommandError(f"{said}: run migrate first; nothing was run.")
        self.say(f"{said}: waiting for migrate before starting.")
        while unapplied(workflow_models()):
            time.sleep(MIGRATE_WAIT)
        self.say("Migrations applied: starting.")

    def _summary(self, works: list[Any], schedulers: list[Scheduler]) -> None:
        self.say(f"{len(works)} unit(s) of work:")
        for work in works:
            accepting = (s.label for s in schedulers if s.accepts(work))
            how = next(accepting, "self-scheduled")
            self.say(
                f"  {work.model_label} {work.name} [{how}, queue {work.queue}, "
                f"check {work.check_interval}]"
            )


def configure_logging(verbosity: int, stream: Any) -> None:
    """The workflow's lines on ``stream`` and django-q2's, in one format.

    A logger configured in ``LOGGING`` is left as configured (django-q2's also
    by ``Q_CLUSTER["log_level"]``). Otherwise the workflow logs WARNING at
    verbosity 0, INFO from 1 and DEBUG (tracebacks of failed attempts) from 3,
    and django-q2's idle INFO chatter shows only from verbosity 2.
    """
    formatter = logging.Formatter(LOG_FORMAT)
    configured = (getattr(settings, "LOGGING", None) or {}).get("loggers", {})
    ours = logging.getLogger("django_workflow")
    levels = {0: logging.WARNING, 1: logging.INFO, 2: logging.INFO}
    if "django_workflow" not in configured:
        if not ours.hasHandlers():  # a root handler of the project's would print each line twice
            handler = logging.StreamHandler(stream)
            handler.setFormatter(formatter)
            ours.addHandler(handler)
        ours.setLevel(levels.get(verbosity, logging.DEBUG))
    queue = logging.getLogger(QUEUE_LOGGER)
    if QUEUE_LOGGER in configured:
        # django-q2 sets its level from Q_CLUSTER when nothing handles its lines, over LOGGING's.
        level = configured[QUEUE_LOGGER].get("level")
        if level is not None:
            queue.setLevel(level)
        return
    for handler in queue.handlers:  # django-q2's own, "%H:%M:%S [Q] ..." otherwise
        handler.setFormatter(formatter)
    if "log_level" not in (getattr(settings, "Q_CLUSTER", None) or {}):
        queue.setLevel(logging.WARNING if verbosity < 2 else levels.get(verbosity, logging.DEBUG))


#: Apps whose tables the worker reads beside the workflow models' own.
READ_BY_THE_WORKER = ("django_workflow", "django_q", "contenttypes")


def unapplied(models: list[Any]) -> list[str]:
    """``app_label.migration`` of each migration still to apply to the databases ``models``
    are written to, of the models' apps and those the worker reads."""
    apps = {model._meta.app_label for model in models} | set(READ_BY_THE_WORKER)
    waiting: dict[str, None] = {}
    for db in sorted({router.db_for_write(model) for model in models}):
        for migration in waiting_migrations(db) or ():
            if migration.app_label in apps:
                waiting[f"{migration.app_label}.{migration.name}"] = None
    return list(waiting)
