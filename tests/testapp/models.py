import os
import signal
import threading
import time
import uuid
from datetime import date, timedelta

import holidays
from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from simple_history.models import HistoricalRecords

from django_workflow import (
    ConditionUnmet,
    Every,
    Join,
    Receive,
    Retry,
    Route,
    Sla,
    Step,
    Timeout,
    Transition,
    Undo,
    WorkflowModel,
)
from django_workflow.policies import (
    actor_attribute_equals,
    all_of,
    any_of,
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


class Monitor(WorkflowModel):
    """A wait step whose action moves its own anchor: a periodic check."""

    next_check_at = models.DateTimeField(null=True, blank=True)
    checks = models.IntegerField(default=0)
    fail_checks = models.BooleanField(default=False)

    class Workflow:
        log = True

        monitoring = Step(
            Timeout(
                "check",
                fire_at="next_check_at",
                action="run_check",
                retry=Retry(max_attempts=3, backoff="5m"),
            ),
            Timeout("give_up", fire_after="10d", transition_to="stopped"),
            # Below the polling floor, run by the project itself with run_work().
            Timeout("quick_look", fire_after="10s", action="look", self_scheduled=True),
        )
        stopped = Step()

    def look(self):
        pass

    def run_check(self):
        if self.fail_checks:
            raise RuntimeError("check failed")
        self.checks += 1
        self.next_check_at += timedelta(days=1)


class Claim(WorkflowModel):
    """Business days in Zagreb with two holidays."""

    reminders = models.IntegerField(default=0)

    class Workflow:
        time_zone = "Europe/Zagreb"
        holidays = [date(2026, 12, 25), "2026-12-26"]

        review = Step(
            Transition("approve", to="approved"),
            Timeout("reminder", fire_after="3bd", action="remind"),
            Timeout("escalation", fire_after="5bd", transition_to="escalated"),
        )
        approved = Step()
        escalated = Step()

    def remind(self):
        self.reminders += 1


class NationalClaim(WorkflowModel):
    """Business days per record: its own time zone and a national calendar."""

    country = models.CharField(max_length=2, default="HR")
    tz = models.CharField(max_length=50, blank=True)

    class Workflow:
        time_zone_field = "tz"
        holidays = "national_holidays"

        review = Step(
            Transition("approve", to="approved"),
            Timeout("escalation", fire_after="1bd", transition_to="escalated"),
        )
        approved = Step()
        escalated = Step()

    def national_holidays(self):
        return holidays.country_holidays(self.country)


class SideEffect(models.Model):
    """One row per action run, to count side effects rather than fired columns."""

    batch = models.ForeignKey("Batch", on_delete=models.CASCADE)

    def __str__(self):
        return f"side effect of {self.batch_id}"


class Batch(WorkflowModel):
    """Many records due at once, for exactly-once firing across processes."""

    class Workflow:
        log = True

        waiting = Step(
            Timeout("ping", fire_after="1d", action="ping"),
            Timeout("expire", fire_after="2d", transition_to="expired"),
        )
        expired = Step()

    def ping(self):
        SideEffect.objects.create(batch=self)


class AtTheFloor(WorkflowModel):
    """Exactly the polling scheduler's floor: accepted."""

    class Workflow:
        waiting = Step(Timeout("soon", fire_after="60s", transition_to="done"))
        done = Step()


class AtThePreciseFloor(WorkflowModel):
    """Exactly the precise scheduler's floor: accepted."""

    class Workflow:
        scheduler = "precise"
        waiting = Step(Timeout("soon", fire_after="1s", transition_to="done"))
        done = Step()


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


class Alarm(WorkflowModel):
    """A precise deadline whose action may take a while."""

    ring_at = models.DateTimeField(null=True, blank=True)
    rang_at = models.DateTimeField(null=True, blank=True)
    rings = models.IntegerField(default=0)
    sleep_seconds = models.FloatField(default=0)

    class Workflow:
        scheduler = "precise"
        log = True

        armed = Step(
            Timeout("ring", fire_at="ring_at", action="ring"),
            Timeout("give_up", fire_after="1h", transition_to="done"),
        )
        done = Step()

    def ring(self):
        time.sleep(self.sleep_seconds)
        self.rings += 1
        self.rang_at = timezone.now()


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


class Escalation(WorkflowModel):
    """A transition timeout into an automatic step: the follow-up it must queue."""

    handled = models.IntegerField(default=0)

    class Workflow:
        log = True

        open = Step(
            Transition("close", to="closed"),
            Timeout("escalate", fire_after="1d", transition_to="escalating"),
        )
        escalating = Step(action="handle", on_success="closed")
        closed = Step()

    def handle(self):
        self.handled += 1


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


class Expense(WorkflowModel):
    """Code in transitions: ``when`` guards, ``action`` methods, and ``from_any_step``."""

    amount = models.IntegerField(default=0)
    receipt = models.BooleanField(default=False)
    approved_by = models.CharField(max_length=50, blank=True)
    note = models.CharField(max_length=100, blank=True)

    class Workflow:
        log = True
        from_any_step = [Transition("cancel", to="cancelled", label="Cancel the expense")]

        submitted = Step(
            Transition(
                "approve",
                to="approved",
                accept=["approved_by"],
                when=Q(receipt=True),
                unmet="Attach the receipt first.",
                action="stamp",
            ),
            Transition("attach", to="submitted", accept=["receipt"], when=Q(receipt=True)),
            Transition("fast_track", to="approved", when=lambda expense: expense.amount < 50),
            Transition("explode", to="approved", action="half_done"),
        )
        approved = Step(Transition("pay", to="paid"))
        paid = Step(Transition("reopen", to="submitted"))
        cancelled = Step(terminal=True)

    def stamp(self):
        self.note = f"approved by {self.approved_by}, in {self.state}"

    def half_done(self):
        self.note = "half"
        self.save()
        raise RuntimeError("the payment system is down")


class Shipment(WorkflowModel):
    """``Step(on_enter=...)``: a durable effect per entry, retried, never moving the record."""

    labels_printed = models.IntegerField(default=0)
    printer_offline = models.BooleanField(default=False)

    class Workflow:
        log = True
        undo = Undo(within="30m")

        packing = Step(
            Transition("ship", to="shipped"),
            Transition("repack", to="packing"),
            Transition("sort", to="sorting"),
            on_enter="print_label",
            retry=Retry(max_attempts=3, backoff="1m"),
        )
        sorting = Step(
            action="pick_route", on_success="shipped", on_enter="print_label", time_limit="2s"
        )
        shipped = Step(Transition("return_to_packing", to="packing", undoable=True))

    def print_label(self):
        if self.printer_offline:
            raise ConnectionError("printer offline")
        self.labels_printed += 1
        marker = os.environ.get("SHIPMENT_CRASH_MARKER")
        if marker and os.path.exists(marker):  # the worker dies mid-effect, once
            os.remove(marker)
            self.save()
            os._exit(1)
        if os.environ.get("SHIPMENT_KILLS_ITS_WORKER"):  # the worker dies mid-effect, always
            os._exit(1)

    def pick_route(self):
        pass


class Appeal(WorkflowModel):
    """Time in step: a logged workflow with a zone per record, a holiday and both kinds
    of timeout (an action that fires in place, a transition that moves the record)."""

    tz = models.CharField(max_length=50, blank=True)
    reminders = models.IntegerField(default=0)

    class Workflow:
        log = True
        time_zone = "Europe/Zagreb"
        time_zone_field = "tz"
        holidays = ["2026-06-04"]

        review = Step(
            Transition("decide", to="decided"),
            Transition("ask", to="waiting"),
            Timeout("reminder", fire_after="1d", action="remind"),
            Timeout("escalation", fire_after="3d", transition_to="escalated"),
        )
        waiting = Step(Transition("answer", to="review"))
        escalated = Step(Transition("decide", to="decided"))
        decided = Step()

    def remind(self):
        self.reminders += 1


class Team(models.Model):
    """Who a case's team is: its lead, and its members (a to-many relation)."""

    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", blank=True)

    def __str__(self) -> str:
        return f"team {self.pk}"


def in_the_region(actor, record, name):
    """A custom policy with no filter form: the actor's ``last_name`` is the case's region.
    ``q = None`` says so on purpose, so the check does not warn; it is asked per record."""
    return actor is not None and getattr(actor, "last_name", None) == record.region


in_the_region.q = None


class Case(WorkflowModel):
    """Work queues: every shipped policy, nested, through relation paths (to-many too),
    ``when`` guards on fields and on a calculation, a callable ``when``, ``from_any_step``
    and a custom policy asked record by record."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL)
    watchers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", blank=True)
    priority = models.IntegerField(default=0)
    amount = models.IntegerField(default=0)
    region = models.CharField(max_length=20, blank=True)
    urgent = models.BooleanField(default=False)

    class Workflow:
        calculations = {"weight": F("priority") * 10 + F("amount")}
        from_any_step = [Transition("withdraw", to="withdrawn", when=Q(amount__lt=50))]
        policies = {
            "withdraw": relates_to_actor_via("owner"),
            "sign_off": in_the_region,
            "recheck": is_staff,
        }

        triage = Step(
            Transition("accept", to="working", when=Q(priority__gte=2)),
            Transition("dismiss", to="withdrawn", when=Q(weight__lt=40)),
            policy=any_of(
                relates_to_actor_via("team__members"),
                all_of(has_perm("testapp.change_case"), is_staff),
            ),
        )
        working = Step(
            Transition("resolve", to="resolved"),
            Transition("submit", to="review"),
            Transition("escalate", to="escalated", when=lambda case: case.urgent),
            policy=any_of(relates_to_actor_via("owner"), relates_to_actor_via("watchers")),
        )
        escalated = Step(
            Transition("settle", to="resolved"),
            policy=all_of(
                relates_to_actor_via("team__lead"),
                any_of(is_staff, actor_attribute_equals("first_name", "lead")),
            ),
        )
        review = Step(Transition("sign_off", to="resolved"), Transition("recheck", to="checking"))
        checking = Step(action="verify", on_success="review")
        resolved = Step(Transition("reopen", to="working"), policy=has_perm("testapp.change_case"))
        withdrawn = Step(terminal=True)

    def verify(self):
        pass


class Standup(WorkflowModel):
    """Wall-clock everies (``cron``) in the record's zone, and ``times``."""

    tz = models.CharField(max_length=50, blank=True)
    reminders = models.IntegerField(default=0)
    pings = models.IntegerField(default=0)
    nudges = models.IntegerField(default=0)
    chimes = models.IntegerField(default=0)
    digests = models.IntegerField(default=0)

    class Workflow:
        log = True
        time_zone = "Europe/Zagreb"
        time_zone_field = "tz"
        holidays = [date(2026, 12, 24), "2026-12-25"]

        waiting = Step(
            Transition("watch_nights", to="nightly"),
            Transition("limit", to="limited"),
            Every("reminder", cron="0 9 * * mon-fri", action="remind", business_days_only=True),
        )
        # 01:30 and 02:30: one of them is skipped or repeated by every clock change
        # in Europe/Zagreb and America/New_York.
        nightly = Step(
            Transition("close", to="closed"),
            Every("night", cron="30 1,2 * * *", action="ping"),
        )
        limited = Step(
            Transition("again", to="limited"),
            Transition("close", to="closed"),
            Every("nudge", interval="1d", action="nudge", times=3),
            Every("chime", cron="0 * * * *", action="chime", until="3h"),
            Every("digest", cron="0 17 * * *", action="digest", times=2),
        )
        closed = Step()

    def remind(self):
        self.reminders += 1

    def ping(self):
        self.pings += 1

    def nudge(self):
        self.nudges += 1

    def chime(self):
        self.chimes += 1

    def digest(self):
        self.digests += 1


class Recheck(WorkflowModel):
    """A transition timeout back into its own step: each firing begins a new stay."""

    class Workflow:
        log = True

        checking = Step(
            Transition("pass_check", to="passed"),
            Timeout("recheck", fire_after="1d", transition_to="checking"),
        )
        passed = Step()


class Voyage(WorkflowModel):
    """A UUID key and a zone per record: the report finds each record's zone by its key."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tz = models.CharField(max_length=50, blank=True)

    class Workflow:
        log = True
        time_zone = "Europe/Zagreb"
        time_zone_field = "tz"

        sailing = Step(Transition("dock", to="docked"))
        docked = Step()


class Clearance(WorkflowModel):
    """Actions that write what their ``when`` and routes read, conditions comparing two
    of the record's own fields, comments and custom data; audited by simple-history."""

    holder = models.CharField(max_length=50, blank=True)
    checked = models.BooleanField(default=False)
    amount = models.IntegerField(default=0)
    limit = models.IntegerField(default=0)
    ticks = models.IntegerField(default=0)
    audit = HistoricalRecords()

    class Workflow:
        log = True

        draft = Step(
            Transition(
                "inspect",
                Route("large", when=Q(checked=False, amount__gte=100)),
                Route("small"),
                when=Q(checked=False),
                action="mark",
                comment="checked by the clerk",
                custom={"colour": "green", "sla_hours": 4},
            ),
            Transition("escalate", to="large", when=Q(amount__gte=F("limit"))),
            Transition("annotate", to="draft", action="explain", comment="unexplained"),
            Transition("reject", to="rejected"),
            Transition("verify", to="verifying"),
            Timeout("tick", fire_after="1d", action="tick"),
        )
        verifying = Step(action="mark", on_success="small")
        large = Step()
        small = Step()
        rejected = Step()

    def mark(self):
        self.checked = True
        self.save()  # an action may save what it set: the step change still sends one pair

    def explain(self):
        return f"explained for {self.holder}"

    def tick(self):
        self.ticks += 1
        self.save()


class Hush(WorkflowModel):
    """``save_signals = False`` with an action timeout whose action writes a field."""

    ticks = models.IntegerField(default=0)

    class Workflow:
        save_signals = False

        waiting = Step(
            Transition("go", to="gone", action="tick"),
            Timeout("tick", fire_after="1d", action="tick"),
        )
        gone = Step()

    def tick(self):
        self.ticks += 1


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


class Purchase(WorkflowModel):
    """An order whose cancel voids its open lines (docs/transitions.md, "Cascades")."""

    class Workflow:
        log = True

        picking = Step(Transition("cancel", to="cancelled", cascade={"lines": "void"}))
        cancelled = Step()


class PurchaseLine(WorkflowModel):
    """A line of a purchase: open lines can be voided, inspected ones only when not
    disputed, packed ones no more."""

    purchase = models.ForeignKey(Purchase, related_name="lines", on_delete=models.CASCADE)
    disputed = models.BooleanField(default=False)

    class Workflow:
        log = True
        policies = {"void": is_staff}  # a person voids a line by hand only as staff

        open = Step(
            Transition("inspect", to="checked"), Transition("void", to="void", label="Void line")
        )
        checked = Step(
            Transition("pack", to="packed"),
            Transition(
                "void", to="void", when=Q(disputed=False), cascade={"reservations": "release"}
            ),
        )
        packed = Step()
        void = Step(on_enter="restock")

    def restock(self):
        """The stock a voided line held goes back on the shelf (owed once per entry)."""


class Reservation(WorkflowModel):
    """Stock held for an inspected line: voiding the line releases it, a cascade of a
    cascade."""

    line = models.ForeignKey(PurchaseLine, related_name="reservations", on_delete=models.CASCADE)

    class Workflow:
        log = True

        held = Step(Transition("release", to="released"))
        released = Step()


class Carrier(models.Model):
    """Whose consignments they are: deleting a carrier takes its consignments and their
    parcels, children first."""

    name = models.CharField(max_length=40, blank=True)

    def __str__(self):
        return self.name


class Consignment(WorkflowModel):
    """A consignment closed for picking waits for its parcels (docs/transitions.md,
    "Joins"): shipping once all are packed or void, on hold as soon as one is lost."""

    carrier = models.ForeignKey(Carrier, null=True, blank=True, on_delete=models.CASCADE)

    class Workflow:
        log = True

        filling = Step(Transition("close", to="picking"))
        picking = Step(
            Join("parcels", all_in=["packed", "void"], to="shipping", any_in={"lost": "on_hold"})
        )
        shipping = Step()
        on_hold = Step()


class Parcel(WorkflowModel):
    consignment = models.ForeignKey(Consignment, related_name="parcels", on_delete=models.CASCADE)

    class Workflow:
        log = True

        open = Step(
            Transition("pack", to="packed"),
            Transition("void", to="void"),
            Transition("lose", to="lost"),
        )
        packed = Step()
        void = Step()
        lost = Step()


class Wave(WorkflowModel):
    """A pick wave released once its picks exist, waiting for the worker to run them
    (docs/transitions.md, "Joins"): a join whose children are automatic steps."""

    class Workflow:
        log = True

        planning = Step(Transition("release", to="picking"))
        picking = Step(Join("picks", all_in=["picked"], to="picked"))
        picked = Step()


class Pick(WorkflowModel):
    """A pick the worker runs: its action notes each start in a file, sleeps, and counts
    the runs it committed."""

    wave = models.ForeignKey(Wave, related_name="picks", on_delete=models.CASCADE)
    trace = models.CharField(max_length=500)
    sleep_seconds = models.FloatField(default=0)
    runs = models.IntegerField(default=0)

    class Workflow:
        log = True

        picking = Step(action="pick", on_success="picked", time_limit="60s")
        picked = Step()

    def pick(self):
        with open(self.trace, "a") as trace:
            trace.write(f"start {self.pk}\n")
        time.sleep(self.sleep_seconds)
        self.runs += 1


class Crate(WorkflowModel):
    """A crate waiting for its bottles (docs/transitions.md, "Joins") whose cancel voids
    the bottles still open ("Cascades"): the cancel and the last bottle's filling race."""

    class Workflow:
        log = True
        undo = Undo()

        filling = Step(Transition("close", to="packing"))
        packing = Step(
            Join("bottles", all_in=["filled", "void"], to="sealed"),
            Transition("cancel", to="cancelled", cascade={"bottles": "void"}, undoable=True),
        )
        sealed = Step()
        cancelled = Step()


class Bottle(WorkflowModel):
    """A bottle of a crate: filled by hand, or void once it waited open an hour (a
    transition timeout, fired in batches)."""

    crate = models.ForeignKey(Crate, related_name="bottles", on_delete=models.CASCADE)

    class Workflow:
        log = True
        undo = Undo()

        open = Step(
            Transition("fill", to="filled", undoable=True),
            Transition("void", to="void"),
            Timeout("spoil", fire_after="1h", transition_to="void"),
        )
        filled = Step()
        void = Step()


class Motion(WorkflowModel):
    """Votes in work queues (docs/votes.md): ``carry`` and ``reject`` each need two
    members' votes (``reject`` only while the motion is not urgent); only its mover may
    ``withdraw`` it. ``has_perm`` is exact with Django's backend alone and asked per record
    beside django-rules, so both paths of ``actionable_by`` are reached."""

    mover = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    urgent = models.BooleanField(default=False)

    class Workflow:
        policies = {
            "carry": has_perm("testapp.change_motion"),
            "reject": has_perm("testapp.change_motion"),
            "withdraw": relates_to_actor_via("mover"),
        }

        open = Step(
            Transition("carry", to="carried", quorum=2),
            Transition("reject", to="rejected", quorum=2, when=Q(urgent=False)),
            Transition("withdraw", to="withdrawn"),
        )
        carried = Step()
        rejected = Step()
        withdrawn = Step()


class Errand(WorkflowModel):
    """Work people hold (docs/holding-work.md): anyone may start an open errand; once
    started, only its holder (or whoever stands in for them) finishes it, and a claim
    that has not moved it within a day is let go; reviews are held too, and only staff
    may claim them."""

    title = models.CharField(max_length=100, blank=True)

    class Workflow:
        log = True
        assignment = True

        open = Step(Transition("start", to="working"), Transition("drop", to="dropped"))
        working = Step(
            Transition("finish", to="review"),
            Transition("note", to="working"),
            Transition("hand_back", to="open"),
            claim=True,
            release_after="1d",
        )
        review = Step(Transition("approve", to="done"), claim=True, policy=is_staff)
        done = Step()
        dropped = Step()

    def __str__(self):
        return self.title or f"Errand {self.pk}"


class Inquiry(WorkflowModel):
    """A customer's question answered within working hours (docs/slas.md): Zagreb's
    09:00-17:00 on business days, or the zone the record names; a new inquiry nobody took
    within four business hours is nudged. Resolution has 16 business hours, counted while
    the inquiry is new, worked on or escalated, paused while it waits on the customer:
    the lead is warned at 12, and at 16 the inquiry is escalated. A first answer is due
    within four calendar hours of its arrival. An inquiry worked on for five days without
    a move is parked, waiting on the customer."""

    zone = models.CharField(max_length=64, blank=True)
    nudges = models.PositiveIntegerField(default=0)
    warnings = models.PositiveIntegerField(default=0)

    class Workflow:
        log = True
        time_zone = "Europe/Zagreb"
        time_zone_field = "zone"
        holidays = [date(2026, 12, 24), date(2026, 12, 25), date(2027, 1, 1)]
        working_hours = "09:00-17:00"
        slas = {
            "resolution": Sla(
                "16bh",
                runs_in=["new", "working", "escalated"],
                warn_at=0.75,
                on_warn="warn_lead",
                on_breach="escalate",
            ),
            "first_answer": Sla("4h", runs_in=["new"]),
        }

        new = Step(
            Transition("take", to="working"),
            Transition("escalate", to="escalated"),
            Transition("resolve", to="resolved"),
            Timeout("nudge", fire_after="4bh", action="nudge"),
        )
        working = Step(
            Transition("ask", to="waiting_on_customer"),
            Transition("note", to="working"),
            Transition("escalate", to="escalated"),
            Transition("resolve", to="resolved"),
            Timeout("park", fire_after="5d", transition_to="waiting_on_customer"),
        )
        waiting_on_customer = Step(
            Transition("reply", to="working"), Transition("resolve", to="resolved")
        )
        escalated = Step(
            Transition("ask", to="waiting_on_customer"), Transition("resolve", to="resolved")
        )
        resolved = Step()

    def nudge(self):
        self.nudges += 1

    def warn_lead(self):
        self.warnings += 1


class Payment(WorkflowModel):
    """A payment a provider reports on (docs/events.md): its webhooks authorise and settle
    it, perhaps before the shop created it, and report its settled amount in order."""

    psp_ref = models.CharField(max_length=40, unique=True)
    settled_amount = models.IntegerField(null=True, blank=True)

    class Workflow:
        log = True
        events = {
            "psp.authorised": Receive(key="psp_ref", transition="authorise", buffer="1d"),
            "psp.settled": Receive(key="psp_ref", transition="settle", buffer="1d"),
            "psp.amount": Receive(key="psp_ref", transition="amend"),
            "psp.refunded": Receive(key="psp_ref", transition="refund"),
            # keyed by an integer field (docs/events.md: a key any field can hold)
            "psp.captured": Receive(key="id", transition="settle", buffer="1d"),
        }

        pending = Step(
            Transition("authorise", to="authorised"), Transition("cancel", to="cancelled")
        )
        authorised = Step(
            Transition("settle", to="settled", accept=["settled_amount"], label="Mark settled"),
            policy=is_staff,
        )
        settled = Step(
            Transition("amend", to="settled", accept=["settled_amount"]),
            Transition("refund", to="refunded"),
        )
        refunded = Step()
        cancelled = Step()

    def __str__(self):
        return self.psp_ref


class Tracking(WorkflowModel):
    """A consignment a carrier tracks on (docs/events.md, "Replays"): each status report is
    numbered (``seq``) and comes repeated and out of order; the newest one applied holds."""

    tracking_ref = models.CharField(max_length=40, unique=True)
    status = models.CharField(max_length=40, blank=True)

    class Workflow:
        log = True
        events = {"carrier.status": Receive(key="tracking_ref", transition="report")}

        travelling = Step(
            Transition("report", to="travelling", accept=["status"]),
            Transition("arrive", to="arrived"),
        )
        arrived = Step()


class Package(WorkflowModel):
    """A package the worker packs (an automatic step that notes each start in a file and
    sleeps) while the carrier's scans wait in the buffer: entering ``ready`` lets in the
    buffered ``collected`` scan, whose move to ``collected`` lets in ``delivered``."""

    ref = models.CharField(max_length=40, unique=True)
    trace = models.CharField(max_length=500)
    sleep_seconds = models.FloatField(default=0)

    class Workflow:
        log = True
        events = {
            "carrier.collected": Receive(key="ref", transition="collect", buffer="1d"),
            "carrier.delivered": Receive(key="ref", transition="deliver", buffer="1d"),
        }

        packing = Step(action="pack", on_success="ready", time_limit="60s")
        ready = Step(Transition("collect", to="collected", action="note_collection"))
        collected = Step(Transition("deliver", to="delivered"))
        delivered = Step()

    def pack(self):
        with open(self.trace, "a") as trace:
            trace.write(f"pack {self.pk}\n")
        time.sleep(self.sleep_seconds)

    def note_collection(self):
        """Sleeps too, so a worker killed mid-work may be applying a buffered scan."""
        with open(self.trace, "a") as trace:
            trace.write(f"collect {self.pk}\n")
        time.sleep(self.sleep_seconds)


class Meter(WorkflowModel):
    """A meter whose readings come numbered (``seq``) and wait in the buffer while the
    meter does not accept them: a reading kept there must never be applied after a newer
    one."""

    ref = models.CharField(max_length=40, unique=True)
    accepting = models.BooleanField(default=False)
    reading = models.IntegerField(null=True, blank=True)

    class Workflow:
        log = True
        events = {"meter.read": Receive(key="ref", transition="record", buffer="1d")}

        live = Step(
            Transition("record", to="live", accept=["reading"], when=Q(accepting=True)),
        )


class Notice(WorkflowModel):
    """Transitions named like the library's calls on records (``release``, ``retract``,
    ``history``, ``undo``, ``assign``, ``current_step``): each takes its name on the
    model, and ``record.workflow`` keeps the library's call. A reminder repeats while a
    notice is published."""

    title = models.CharField(max_length=100, blank=True)
    reminders = models.IntegerField(default=0)

    class Workflow:
        log = True
        assignment = True
        undo = Undo()
        draft = Step(
            Transition("release", to="published", undoable=True),
            Transition("retract", to="withdrawn"),
            Transition("current_step", to="draft"),
        )
        published = Step(
            Transition("history", to="archived"),
            Transition("undo", to="draft"),
            Transition("assign", to="draft"),
            Every("remind", interval="1h", action="remind"),
        )
        withdrawn = Step()
        archived = Step()

    def remind(self):
        type(self).objects.filter(pk=self.pk).update(reminders=F("reminders") + 1)


class Ledger(WorkflowModel):
    """A transition accepting a value of every column type the engine's fast path binds:
    what it refuses must be what ``save()`` refuses, and nothing stored wrapped round."""

    small = models.SmallIntegerField(null=True, blank=True)
    regular = models.IntegerField(null=True, blank=True)
    big = models.BigIntegerField(null=True, blank=True)
    positive = models.PositiveIntegerField(null=True, blank=True)
    amount = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True)
    code = models.CharField(max_length=10, blank=True)
    booked_on = models.DateField(null=True, blank=True)
    ref = models.CharField(max_length=20, unique=True, null=True, blank=True)

    class Workflow:
        log = True
        events = {"ledger.booked": Receive(key="ref", transition="book")}

        open = Step(
            Transition(
                "book",
                to="booked",
                accept=["small", "regular", "big", "positive", "amount", "code", "booked_on"],
            )
        )
        booked = Step()


class Node(WorkflowModel):
    """A tree of its own model: closing a node closes its children, theirs first, at any
    depth; the data may hold cycles (two nodes each the other's parent, a node its own)."""

    parent = models.ForeignKey(
        "self", null=True, blank=True, related_name="children", on_delete=models.CASCADE
    )
    locked = models.BooleanField(default=False)

    class Workflow:
        log = True

        open = Step(
            Transition("close", to="closed", cascade={"children": "close"}, action="unlocked"),
            Transition("sweep", to="closed", cascade={"children": "archive"}),
            Transition("archive", to="archived"),  # plain: a step's children move together
        )
        closed = Step()
        archived = Step()

    def unlocked(self):
        """A locked node refuses to close, after its children did: they are undone."""
        if self.locked:
            raise ConditionUnmet(self, "close", "open", "It is locked.")


class Pause(WorkflowModel):
    """An automatic step whose action waits on a lock of its own (a thread's result, as
    an SDK's transfer would): a busy worker, not a wedged one."""

    seconds = models.FloatField(default=0)

    class Workflow:
        waiting = Step(action="wait_on_a_lock", on_success="done", time_limit="2m")
        done = Step()

    def wait_on_a_lock(self):
        threading.Event().wait(self.seconds)
