"""``manage.py workflow_worker``: run every workflow's work.

Syncs the polling Schedules, then runs a django-q2 cluster per workflow
queue and, when a workflow uses the precise scheduler, the timeline.
SIGTERM and Ctrl-C stop it cleanly: running actions finish within
``SHUTDOWN_GRACE`` seconds, or are released for another worker. ``--once``
runs everything due now and exits, for cron-driven deployments and tests.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from django_workflow.schedulers.base import all_works
from django_workflow.schedulers.polling import PollingScheduler
from django_workflow.schedulers.precise import PreciseScheduler
from django_workflow.supervisor import Supervisor
from django_workflow.testing import run_due_work

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LOG_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


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
        self._log_to_stdout(options["verbosity"])
        works = all_works()
        self._summary(works)
        if options["once"]:
            fired = run_due_work()
            for name, count in fired.items():
                self.stdout.write(f"fired {name}: {count}")
            self.stdout.write(f"done: {sum(fired.values())} fired")
            return
        counts = PollingScheduler().sync(works)
        self.stdout.write("schedules: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        queues = options["queues"] or sorted({work.queue for work in works})
        self._run(queues, works, timeline=not options["no_timeline"])

    def _run(self, queues: list[str], works: list[Any], timeline: bool) -> None:
        supervisor = Supervisor(queues, works, timeline, say=self.stdout.write)
        healthy = supervisor.run()
        self.stdout.write("stopped")
        if not healthy:
            sys.exit(1)

    def _summary(self, works: list[Any]) -> None:
        polling, precise = PollingScheduler(), PreciseScheduler()
        self.stdout.write(f"{len(works)} unit(s) of work:")
        for work in works:
            how = "timeline" if precise.accepts(work) else "polled" if polling.accepts(work) else ""
            how = how or "self-scheduled"
            self.stdout.write(
                f"  {work.model_label} {work.name} [{how}, queue {work.queue}, "
                f"check {work.check_interval}]"
            )

    def _log_to_stdout(self, verbosity: int) -> None:
        """The workflow's lines on stdout, django-q2's in the same format; django-q2's
        idle INFO chatter only from verbosity 2 or an explicit ``Q_CLUSTER["log_level"]``."""
        formatter = logging.Formatter(LOG_FORMAT, LOG_DATE_FORMAT)
        logger = logging.getLogger("django_workflow")
        if verbosity >= 1 and not logger.handlers:
            handler = logging.StreamHandler(self.stdout)
            handler.setFormatter(formatter)
            logger.addHandler(handler)
            logger.setLevel(logging.DEBUG if verbosity >= 3 else logging.INFO)
        queue_logger = logging.getLogger("django-q")
        for handler in queue_logger.handlers:
            handler.setFormatter(formatter)
        if verbosity < 2 and "log_level" not in (getattr(settings, "Q_CLUSTER", None) or {}):
            queue_logger.setLevel(logging.WARNING)
