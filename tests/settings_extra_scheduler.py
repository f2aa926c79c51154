"""The test settings, with one more scheduler in the registry (tests/extra_scheduler.py)."""

from datetime import timedelta

from django_workflow.worker.schedulers.catalog import SCHEDULERS, SchedulerInfo
from tests.settings import *  # noqa: F403

SCHEDULERS["tally"] = SchedulerInfo(
    "tally", timedelta(seconds=1), "tests.extra_scheduler.TallyScheduler"
)
