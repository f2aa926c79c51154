"""A scheduler of the tests' own, registered by ``tests/settings_extra_scheduler.py``:
whatever the registry holds, the worker syncs it and runs its loop."""

import sys
import threading
from datetime import timedelta

from django_workflow.work import Work
from django_workflow.worker.schedulers import Scheduler


class TallyScheduler(Scheduler):
    name = "tally"
    floor = timedelta(seconds=1)
    label = "tally"
    arranges = "tallies"

    def accepts(self, work: Work) -> bool:
        return False

    def sync(self, works: list[Work]) -> dict[str, int]:
        return {"seen": len(works)}

    def loop(self, works: list[Work]):
        def run(stop: threading.Event) -> None:
            say(f"tally loop running in {threading.current_thread().name}")
            stop.wait()
            say("tally loop stopped")

        return run


def say(line: str) -> None:
    """One write per line: ``print`` writes the newline apart, and the worker's other
    threads write between the two."""
    sys.stdout.write(f"{line}\n")
    sys.stdout.flush()
