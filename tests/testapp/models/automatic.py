"""Models of automatic steps: actions the worker runs, retries, effects and time limits."""

import os
import signal
import time

from django.db import models

from django_workflow import (
    Retry,
    Step,
    Timeout,
    WorkflowModel,
)


class Import(WorkflowModel):
    """The initial step is automatic; no log."""

    rows = models.IntegerField(default=0)

    class Workflow:
        parse = Step(action="do_parse", on_success="done")
        done = Step()

    def do_parse(self):
        if self.rows < 0:
            raise ValueError("nothing to parse")
        self.rows = 42


class SideEffect(models.Model):
    """One row per action run, to count side effects rather than fired columns."""

    batch = models.ForeignKey("Batch", on_delete=models.CASCADE)

    def __str__(self):
        return f"side effect of {self.batch_id}"


class Sync(WorkflowModel):
    """An automatic step without on_error: it halts when its attempts run out."""

    broken = models.BooleanField(default=False)
    hang_seconds = models.IntegerField(default=0)
    pushes = models.IntegerField(default=0)

    class Workflow:
        log = True

        pushing = Step(
            action="push",
            on_success="pushed",
            retry=Retry(max_attempts=2, backoff="10s"),
            time_limit="3s",
        )
        pushed = Step()

    def push(self):
        if self.hang_seconds:
            time.sleep(self.hang_seconds)
        if self.broken:
            raise ConnectionError("remote refused")
        self.pushes += 1


class Job(WorkflowModel):
    """An automatic step for stops and crashes: its action notes each start in a file."""

    trace = models.CharField(max_length=500)
    sleep_seconds = models.FloatField(default=0)
    kill_worker = models.BooleanField(default=False)
    runs = models.IntegerField(default=0)

    class Workflow:
        log = True

        running = Step(action="work", on_success="done", on_error="failed", time_limit="60s")
        done = Step()
        failed = Step()

    def work(self):
        with open(self.trace, "a") as trace:
            trace.write(f"start {os.getpid()}\n")
        if self.kill_worker:
            os.kill(os.getpid(), signal.SIGKILL)  # a poison pill: the action kills its worker
        time.sleep(self.sleep_seconds)
        self.runs += 1

    def starts(self) -> int:
        with open(self.trace) as trace:
            return trace.read().count("start")


class Render(WorkflowModel):
    """An automatic step with ``on_error`` and a deadline of its own whose action fails:
    ``on_error`` is the way out of the step's action alone, never of its deadlines."""

    renders = models.IntegerField(default=0)

    class Workflow:
        log = True

        rendering = Step(
            Timeout("nudge", fire_after="1h", action="nudge"),
            action="render",
            on_success="rendered",
            on_error="render_failed",
        )
        rendered = Step()
        render_failed = Step()

    def render(self):
        self.renders += 1

    def nudge(self):
        raise RuntimeError("the renderer did not answer")
