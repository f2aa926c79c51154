"""Workflows declared with the public API only, one per kind of state an upgrade must keep.

scripts/upgrade.sh migrates them on the release it upgrades from, puts records in
every interesting state there (``upgrade_seed``), upgrades the package and walks time
forward (``upgrade_walk``).
"""

from django.db import models
from django.utils import timezone

from django_workflow import (
    Every,
    Receive,
    Retry,
    Sla,
    Step,
    Timeout,
    Transition,
    WorkflowModel,
)


class Reminder(WorkflowModel):
    """An action timeout: one record due before the upgrade's "now", one after."""

    name = models.CharField(max_length=50)
    nudges = models.IntegerField(default=0)

    class Workflow:
        log = True
        waiting = Step(
            Transition("close", to="closed"),
            Timeout("nudge", fire_after="1h", action="nudge"),
        )
        closed = Step(terminal=True)

    def nudge(self):
        self.nudges += 1


class Digest(WorkflowModel):
    """An every with a limit per round, stopped mid-series by the upgrade."""

    name = models.CharField(max_length=50)
    ticks = models.IntegerField(default=0)

    class Workflow:
        log = True
        active = Step(
            Transition("stop", to="stopped"),
            Every("tick", interval="1h", action="tick", times=5),
        )
        stopped = Step(terminal=True)

    def tick(self):
        self.ticks += 1


class Job(WorkflowModel):
    """An automatic step that fails while ``fail_until`` is ahead: one record halted (its
    attempts spent), one with one attempt spent and its retry due after the upgrade."""

    name = models.CharField(max_length=50)
    fail_until = models.DateTimeField(null=True, blank=True)
    runs = models.IntegerField(default=0)

    class Workflow:
        log = True
        running = Step(action="work", on_success="done", retry=Retry(max_attempts=3, backoff="10m"))
        done = Step(terminal=True)

    def work(self):
        if self.fail_until is not None and timezone.now() < self.fail_until:
            raise RuntimeError(f"job {self.name} fails until {self.fail_until.isoformat()}")
        self.runs += 1


class Parcel(WorkflowModel):
    """``on_enter`` effects: one already run, one owed, two owed by a record that moved on."""

    name = models.CharField(max_length=50)
    labels = models.IntegerField(default=0)
    notices = models.IntegerField(default=0)

    class Workflow:
        log = True
        packing = Step(Transition("ship", to="shipped"), on_enter="print_label")
        shipped = Step(Transition("hand_over", to="handed_over"), on_enter="notify")
        handed_over = Step(terminal=True)

    def print_label(self):
        self.labels += 1

    def notify(self):
        self.notices += 1


class Document(WorkflowModel):
    """A quorum of two: one vote cast before the upgrade."""

    title = models.CharField(max_length=50)

    class Workflow:
        log = True
        in_review = Step(
            Transition("approve", to="approved", quorum=2),
            Transition("request_changes", to="draft"),
        )
        draft = Step(Transition("submit", to="in_review"))
        approved = Step(terminal=True)


class Ticket(WorkflowModel):
    """A record someone holds in a claim step, released by the worker after a day."""

    subject = models.CharField(max_length=50)

    class Workflow:
        log = True
        assignment = True
        triage = Step(Transition("resolve", to="resolved"), claim=True, release_after="1d")
        resolved = Step(terminal=True)


class Case(WorkflowModel):
    """A service-level clock that ran, paused while waiting, and runs again."""

    title = models.CharField(max_length=50)
    warnings = models.IntegerField(default=0)

    class Workflow:
        log = True
        slas = {"resolution": Sla("8h", runs_in=["new", "working"], warn_at=0.5, on_warn="warn")}
        new = Step(Transition("start", to="working"))
        working = Step(Transition("ask", to="waiting"), Transition("resolve", to="resolved"))
        waiting = Step(Transition("reply", to="working"))
        resolved = Step(terminal=True)

    def warn(self):
        self.warnings += 1


class Payment(WorkflowModel):
    """Events from outside: a settlement delivered before its authorisation waits."""

    psp_ref = models.CharField(max_length=40, unique=True)
    settled_amount = models.IntegerField(null=True, blank=True)

    class Workflow:
        log = True
        events = {
            "psp.authorised": Receive(key="psp_ref", transition="authorise", buffer="1d"),
            "psp.settled": Receive(key="psp_ref", transition="settle", buffer="1d"),
        }
        pending = Step(Transition("authorise", to="authorised"))
        authorised = Step(Transition("settle", to="settled", accept=["settled_amount"]))
        settled = Step(terminal=True)


class Article(WorkflowModel):
    """A transition named ``retract``: release 0.3.0 refuses it (E017, its own
    ``WorkflowModel.retract()`` withdraws votes); after the upgrade ``article.retract()``
    must be the transition."""

    title = models.CharField(max_length=50)

    class Workflow:
        log = True
        published = Step(Transition("retract", to="retracted"))
        retracted = Step(terminal=True)
