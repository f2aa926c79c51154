"""Models of transitions people call: policies, conditions, routes, forms, undo and the log."""

import uuid
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from simple_history.models import HistoricalRecords

from django_workflow import (
    Every,
    Retry,
    Route,
    Step,
    Timeout,
    Transition,
    Undo,
    WorkflowModel,
)
from django_workflow.policies import (
    actor_attribute_equals,
    has_perm,
    is_staff,
    relates_to_actor_via,
)

STOP_WORDS = -99


class Candidate(WorkflowModel):
    """The spec's example: automatic screening, manual decisions, routes, a policy, the log."""

    name = models.CharField(max_length=200)
    priority = models.CharField(max_length=20, default="normal")
    score = models.IntegerField(null=True, blank=True)
    resume_words = models.IntegerField(default=0)
    screening_runs = models.IntegerField(default=0)

    class Workflow:
        log = True

        screening = Step(
            action="run_screening",
            on_success=[Route("interview", when=Q(score__gte=5)), Route("rejected")],
            on_error="screening_failed",
            retry=Retry(max_attempts=3, backoff="30s"),
            time_limit="2m",
        )
        interview = Step(
            Transition("approve", to="offer"),
            Transition("reject", to="rejected"),
            Transition(
                "triage",
                Route("fast_track", when=Q(priority="urgent")),
                Route("offer", when=Q(priority="normal")),
                accept=["priority"],
            ),
            Transition("rescreen", to="screening"),
            Transition("hold", to="interview"),
            policy=actor_attribute_equals("role", "recruiter"),
        )
        fast_track = Step(Transition("approve", to="offer"), policy=is_staff)
        offer = Step(terminal=True)
        rejected = Step(terminal=True)
        screening_failed = Step(Transition("rescreen", to="screening"))

        policies = {
            "approve": actor_attribute_equals("role", "recruiter"),
            "rescreen": actor_attribute_equals("role", "recruiter"),
        }

    def run_screening(self):
        if self.resume_words == STOP_WORDS:
            raise KeyboardInterrupt  # the worker is told to stop mid-action
        if self.resume_words < 0:
            raise ValueError("negative resume")
        self.screening_runs += 1
        self.score = self.resume_words // 100


class Order(WorkflowModel):
    """UUID key, a renamed state field and a chain of automatic steps."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    fail_at = models.CharField(max_length=20, blank=True)
    visited = models.CharField(max_length=200, blank=True)

    class Workflow:
        state_attribute = "status"
        log = True
        queue = "orders"

        draft = Step(Transition("place", to="charge"))
        charge = Step(action="do_charge", on_success="reserve", on_error="payment_failed")
        reserve = Step(action="do_reserve", on_success="pack", on_error="out_of_stock")
        pack = Step(action="do_pack", on_success="ship", on_error="out_of_stock")
        ship = Step(action="do_ship", on_success="shipped", on_error="out_of_stock")
        shipped = Step()
        payment_failed = Step(Transition("retry_payment", to="charge"))
        out_of_stock = Step(Transition("restock", to="reserve"))

    def _visit(self, name):
        if self.fail_at == name:
            self.visited += f"{name}!,"
            raise RuntimeError(f"{name} failed")
        self.visited += f"{name},"

    def do_charge(self):
        self._visit("charge")

    def do_reserve(self):
        self._visit("reserve")

    def do_pack(self):
        self._visit("pack")

    def do_ship(self):
        self._visit("ship")


class Ticket(WorkflowModel):
    """One transition name acting per step; policies by permission and by relation."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reopened = models.IntegerField(default=0)

    class Workflow:
        log = True

        new = Step(
            Transition("close", to="closed"),
            Transition("start", to="working"),
            policy=has_perm("testapp.change_ticket"),
        )
        working = Step(
            Transition("close", to="resolved"),
            Transition("assign_back", to="new"),
            policy=has_perm("testapp.change_ticket"),
        )
        resolved = Step(Transition("reopen", to="working"))
        closed = Step(terminal=True)

        policies = {"reopen": relates_to_actor_via("owner")}


class AbstractReview(WorkflowModel):
    """An abstract base carrying the workflow; concrete children inherit it."""

    title = models.CharField(max_length=100, default="")

    class Workflow:
        submitted = Step(Transition("accept", to="accepted"), Transition("refuse", to="refused"))
        accepted = Step()
        refused = Step()

    class Meta:
        abstract = True


class Review(AbstractReview):
    pass


class UrgentReview(Review):
    """Multi-table inheritance: the workflow columns live on the parent table."""

    deadline_note = models.CharField(max_length=100, default="")


class Article(WorkflowModel):
    """Declares its own state field: it is kept, not replaced."""

    state = models.CharField(max_length=30, default="draft", db_index=True)

    class Workflow:
        draft = Step(Transition("publish", to="published"))
        published = Step(Transition("publish", to="published"))

    def __str__(self):
        return f"Article {self.pk}"


class Routed(WorkflowModel):
    """Routes on callables, Q over nullable values, and accepted fields."""

    amount = models.IntegerField(null=True, blank=True)
    decision = models.CharField(max_length=20, blank=True)

    class Workflow:
        log = True

        open = Step(
            Transition(
                "decide",
                Route("approved", when=Q(decision="approve")),
                Route("declined", when=Q(decision="decline")),
                accept=["decision"],
            ),
            Transition(
                "size",
                Route("large", when=Q(amount__gte=100)),
                Route("small", when=lambda record: record.amount is not None),
            ),
        )
        approved = Step()
        declined = Step()
        large = Step()
        small = Step()


class CandidateProxy(Candidate):
    """A proxy shares its concrete model's workflow and log rows."""

    class Meta:
        proxy = True


PROPOSAL_SAVES = []


class Proposal(WorkflowModel):
    """Deadlines of every kind in one manual step."""

    submitted_at = models.DateTimeField(null=True, blank=True)
    respond_by = models.DateTimeField(null=True, blank=True)
    reminders = models.IntegerField(default=0)
    nags = models.IntegerField(default=0)
    chases = models.IntegerField(default=0)
    follow_ups = models.IntegerField(default=0)
    notices = models.IntegerField(default=0)
    calculated = models.IntegerField(default=0)

    class Workflow:
        log = True
        calculations = {"answer_due": F("submitted_at") + timedelta(hours=2)}

        review = Step(
            Transition("approve", to="approved"),
            Transition("bounce", to="review"),
            Timeout("reminder", fire_after="2d", action="remind"),
            Timeout("escalation", fire_after="10d", transition_to="escalated"),
            Every("nag", interval="2d", action="nag", until="8d"),
            Timeout("chase", fire_at="respond_by", action="chase"),
            Timeout("follow_up", fire_after="1h", field="submitted_at", action="follow_up"),
            Timeout("first_notice", fire_after="3d", action="notify"),
            Timeout("second_notice", fire_after="5d", action="notify"),
            Timeout("answer", fire_at="answer_due", action="calculate"),
        )
        approved = Step()
        escalated = Step(Transition("approve", to="approved"))

    def save(self, *args, **kwargs):
        PROPOSAL_SAVES.append(self.pk)  # a project's own save(), which firings go through
        super().save(*args, **kwargs)

    def remind(self):
        self.reminders += 1

    def nag(self):
        self.nags += 1

    def chase(self):
        self.chases += 1

    def follow_up(self):
        self.follow_ups += 1

    def notify(self):
        self.notices += 1

    def calculate(self):
        self.calculated += 1


class Decision(WorkflowModel):
    """Undoable decisions, for the same actor, within 30 minutes."""

    note = models.CharField(max_length=100, blank=True)

    class Workflow:
        log = True
        undo = Undo(within="30m", same_actor=True)

        pending = Step(
            Transition("approve", to="checking", undoable=True, accept=["note"]),
            Transition("reject", to="rejected", undoable=True),
            Transition("hold", to="held", label="Put on hold"),
        )
        checking = Step(action="verify", on_success="approved")
        approved = Step()
        rejected = Step(Transition("reopen", to="pending"))
        held = Step(Transition("release", to="pending"), label="On hold")

    def verify(self):
        pass


class Draft(WorkflowModel):
    """Undo for staff only, at any time, by anyone on the staff."""

    class Workflow:
        log = True
        undo = Undo(policy=is_staff)

        writing = Step(Transition("submit", to="submitted", undoable=True))
        submitted = Step()


class Permit(WorkflowModel):
    """Audited by django-simple-history: one historical row per step change."""

    note = models.CharField(max_length=100, blank=True)
    audit = HistoricalRecords()  # not "history": that is the workflow's log

    class Workflow:
        draft = Step(Transition("submit", to="review"))
        review = Step(
            Transition("approve", to="approved", accept=["note"]),
            Timeout("expire", fire_after="1d", transition_to="expired"),
        )
        approved = Step()
        expired = Step(Transition("revive", to="review"))


class Quiet(WorkflowModel):
    """``save_signals = False``: step changes send no save signals."""

    class Workflow:
        save_signals = False

        draft = Step(Transition("submit", to="done"))
        done = Step()
