"""Workflows declared the way the documentation shows, through the public API only."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from django_workflow import (
    Every,
    Join,
    Receive,
    Retry,
    Route,
    Sla,
    Step,
    Timeout,
    Transition,
    WorkflowModel,
)
from django_workflow.policies import has_perm


class Application(WorkflowModel):
    """Automatic steps: a retried action, a chain of three, routes, an on_enter effect."""

    applicant = models.CharField(max_length=100)
    score = models.IntegerField(null=True, blank=True)
    # The screening service is down until this instant: screening fails before it.
    service_back_at = models.DateTimeField(null=True, blank=True)
    panel_notified = models.IntegerField(default=0)

    class Workflow:
        log = True
        screening = Step(
            action="screen",
            on_success="scoring",
            on_error="failed",
            retry=Retry(max_attempts=3, backoff="30s"),
        )
        scoring = Step(action="compute_score", on_success="ranking")
        ranking = Step(
            action="rank",
            on_success=[Route("interview", when=Q(score__gte=5)), Route("rejected")],
        )
        interview = Step(
            Transition("hire", to="hired"),
            Transition("reject", to="rejected"),
            on_enter="notify_panel",
        )
        failed = Step()
        hired = Step()
        rejected = Step()

    def screen(self):
        if self.service_back_at is not None and timezone.now() < self.service_back_at:
            raise ConnectionError("the screening service is down")

    def compute_score(self):
        self.score = len(self.applicant)

    def rank(self):
        """Nothing to compute: the routes read the score."""

    def notify_panel(self):
        self.panel_notified += 1


class Proposal(WorkflowModel):
    """Deadlines: a reminder, a nag on an interval, an expiry; and a `retract` transition."""

    title = models.CharField(max_length=200)
    reminders = models.IntegerField(default=0)
    nags = models.IntegerField(default=0)

    class Workflow:
        log = True
        draft = Step(Transition("submit", to="review"))
        review = Step(
            Transition("approve", to="approved"),
            # `retract` is also the name of a WorkflowModel method (withdrawing a vote).
            Transition("retract", to="draft"),
            Timeout("reminder", fire_after="2h", action="remind"),
            Every("nag", interval="1d", action="nag", times=2),
            Timeout("expiry", fire_after="5d", transition_to="expired"),
        )
        approved = Step()
        expired = Step()

    def remind(self):
        self.reminders += 1

    def nag(self):
        self.nags += 1


class Order(WorkflowModel):
    """A join on the order's lines, and a cancel cascading over them."""

    reference = models.CharField(max_length=40)

    class Workflow:
        log = True
        filling = Step(
            Transition("close", to="picking"),
            Transition("cancel", to="cancelled", cascade={"lines": "void"}),
        )
        picking = Step(
            Join("lines", all_in=["packed", "void"], to="shipping"),
            Transition("cancel", to="cancelled", cascade={"lines": "void"}),
        )
        shipping = Step()
        cancelled = Step()


class Line(WorkflowModel):
    order = models.ForeignKey(Order, related_name="lines", on_delete=models.CASCADE)
    sku = models.CharField(max_length=40)

    class Workflow:
        log = True
        open = Step(Transition("pack", to="packed"), Transition("void", to="void"))
        packed = Step()
        void = Step()


class Document(WorkflowModel):
    """Two different approvers decide."""

    title = models.CharField(max_length=200)

    class Workflow:
        log = True
        draft = Step(Transition("submit", to="in_review"))
        in_review = Step(
            Transition("approve", to="approved", quorum=2),
            Transition("request_changes", to="draft"),
            policy=has_perm("shop.change_document"),
        )
        approved = Step(terminal=True)


class Ticket(WorkflowModel):
    """Holders and a claim step; a service level that pauses while the customer is away."""

    subject = models.CharField(max_length=200)
    lead_warnings = models.IntegerField(default=0)

    class Workflow:
        log = True
        assignment = True
        slas = {
            "resolution": Sla(
                "4h",
                runs_in=["new", "working", "management"],
                warn_at=0.5,
                on_warn="warn_lead",
                on_breach="escalate",
            ),
        }
        new = Step(Transition("take", to="working"), Transition("escalate", to="management"))
        working = Step(
            Transition("ask", to="waiting_on_customer"),
            Transition("escalate", to="management"),
            Transition("resolve", to="resolved"),
        )
        waiting_on_customer = Step(Transition("reply", to="working"))
        management = Step(Transition("resolve", to="resolved"), claim=True)
        resolved = Step()

    def warn_lead(self):
        self.lead_warnings += 1


class Payment(WorkflowModel):
    """Events from a payment provider: once each, early ones buffered."""

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
        settled = Step()
