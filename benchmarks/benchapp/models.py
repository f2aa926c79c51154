"""The same two-step workflow written with django_workflow and with django-fsm-2."""

from datetime import timedelta

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.db.models import F, Q
from django.utils import timezone
from django_fsm import ConcurrentTransitionMixin, FSMField, transition

from django_workflow import Every, Receive, Step, Timeout, Transition, WorkflowModel
from django_workflow.policies import all_of, any_of, has_perm, is_staff, relates_to_actor_via


class Ours(WorkflowModel):
    class Workflow:
        log = True
        open = Step(Transition("flip", to="closed"))
        closed = Step(Transition("flop", to="open"))


class PeerLog(models.Model):
    """The peer's log row, shaped like django_workflow's TransitionLog."""

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.CharField(max_length=255)
    from_state = models.CharField(max_length=100)
    to_state = models.CharField(max_length=100)
    transition_name = models.CharField(max_length=200)
    triggered_by = models.CharField(max_length=20)
    occurred_at = models.DateTimeField(default=timezone.now)
    actor_repr = models.CharField(max_length=255, blank=True)


class Peer(ConcurrentTransitionMixin, models.Model):
    state = FSMField(default="open", db_index=True)
    state_entered_at = models.DateTimeField(default=timezone.now)

    @transition(field=state, source="open", target="closed")
    def flip(self):
        self.state_entered_at = timezone.now()

    @transition(field=state, source="closed", target="open")
    def flop(self):
        self.state_entered_at = timezone.now()

    def run(self, name, actor=None):
        """One guarded transition, saved with its log row in one transaction."""
        before = self.state
        with transaction.atomic(using=self._state.db):
            getattr(self, name)()
            self.save()
            PeerLog.objects.using(self._state.db).create(
                content_type=ContentType.objects.db_manager(self._state.db).get_for_model(Peer),
                object_id=str(self.pk),
                from_state=before,
                to_state=self.state,
                transition_name=name,
                triggered_by="manual",
                actor_repr="" if actor is None else str(actor),
            )


class Chain(WorkflowModel):
    """Five automatic steps in a row."""

    class Workflow:
        one = Step(action="work", on_success="two")
        two = Step(action="work", on_success="three")
        three = Step(action="work", on_success="four")
        four = Step(action="work", on_success="five")
        five = Step(action="work", on_success="done")
        done = Step()

    def work(self):
        pass


class BenchAlarm(WorkflowModel):
    """A precise deadline that notes when it fired."""

    ring_at = models.DateTimeField(null=True)
    rang_at = models.DateTimeField(null=True)

    class Workflow:
        scheduler = "precise"
        armed = Step(
            Timeout("ring", fire_at="ring_at", action="ring"),
            Timeout("give_up", fire_after="1d", transition_to="done"),
        )
        done = Step()

    def ring(self):
        self.rang_at = timezone.now()


class Bystander(models.Model):
    """Another writer's table: its writes must never wait long on a firing."""

    touched = models.IntegerField(default=0)


# The "Deadlines at scale" benchmarks ------------------------------------------------------
#
# "Now" in those benchmarks is a Tuesday 10:00 in Zagreb after a holiday Monday (and a
# holiday Friday before the weekend), so business-day deadlines just behind it skip four
# days off in a row; the same calendar is declared on every model below.

BENCH_ZONE = "Europe/Zagreb"
BENCH_HOLIDAYS = ["2026-12-24", "2026-12-25", "2026-12-28"]


def _noop(self):
    pass


def _kind_model(name, deadline, doc, calculations=None, extra_fields=None):
    """Eight steps in a cycle; the kind's deadline on s0-s3, nothing on s4-s7."""
    steps = {}
    for index in range(8):
        children = [Transition("next", to=f"s{(index + 1) % 8}")]
        if index < 4:
            children.append(deadline())
        steps[f"s{index}"] = Step(*children)
    options = {"log": True, "time_zone": BENCH_ZONE, "holidays": BENCH_HOLIDAYS}
    if calculations:
        options["calculations"] = calculations
    attrs = {
        "__module__": __name__,
        "__doc__": doc,
        "Workflow": type("Workflow", (), {**options, **steps}),
        "remind": _noop,
        **(extra_fields or {}),
    }
    return type(WorkflowModel)(name, (WorkflowModel,), attrs)


KindCalendar = _kind_model(
    "KindCalendar",
    lambda: Timeout("remind", fire_after="2d", action="remind"),
    "A calendar action timeout, fire_after='2d'.",
)
KindBusiness = _kind_model(
    "KindBusiness",
    lambda: Timeout("remind", fire_after="2bd", action="remind"),
    "A business-day action timeout, fire_after='2bd' (Zagreb, holidays).",
)
KindEvery = _kind_model(
    "KindEvery",
    lambda: Every("nag", interval="1d", until="7d", action="remind"),
    "An every with an until: interval='1d', until='7d'.",
)
KindCalculated = _kind_model(
    "KindCalculated",
    lambda: Timeout("answer", fire_at="answer_due", action="remind"),
    "An action timeout at a calculations entry (submitted_at + 2 h).",
    calculations={"answer_due": F("submitted_at") + timedelta(hours=2)},
    extra_fields={"submitted_at": models.DateTimeField(null=True)},
)
KIND_MODELS = {
    "calendar 2d": KindCalendar,
    "business 2bd": KindBusiness,
    "every 1d until 7d": KindEvery,
    "calculation fire_at": KindCalculated,
}


def _deadline(index, action):
    """Deadline ``index`` of a step: calendar, business-day, every-until, one calculation."""
    days = index % 5 + 1
    if index % 4 == 1:
        return Timeout(f"b{index}", fire_after=f"{days}bd", action=action)
    if index % 4 == 2:
        interval = index % 3 + 1
        return Every(f"e{index}", interval=f"{interval}d", until=f"{interval + 6}d", action=action)
    if index == 3:
        return Timeout(f"c{index}", fire_at="answer_due", action=action)
    return Timeout(f"t{index}", fire_after=f"{days}d", action=action)


def _many_deadlines(count):
    """open and closed (flip/flop) share ``count`` deadlines; four plain steps p0-p3."""
    steps, actions = {}, {}
    shares = {"open": (count + 1) // 2, "closed": count // 2}
    for step, move, target in (("open", "flip", "closed"), ("closed", "flop", "open")):
        children = [Transition(move, to=target), Transition("park", to="p0")]
        for index in range(shares[step]):
            action = f"act_{step}_{index}"
            actions[action] = _noop
            children.append(_deadline(index, action))
        steps[step] = Step(*children)
    for index in range(4):
        steps[f"p{index}"] = Step(Transition("park", to=f"p{(index + 1) % 4}"))
    return steps, actions


def _deadlines_model(name, count, doc):
    steps, actions = _many_deadlines(count)
    options = {
        "log": True,
        "time_zone": BENCH_ZONE,
        "holidays": BENCH_HOLIDAYS,
        "calculations": {"answer_due": F("submitted_at") + timedelta(hours=2)},
    }
    attrs = {
        "__module__": __name__,
        "__doc__": doc,
        "submitted_at": models.DateTimeField(null=True),
        "Workflow": type("Workflow", (), {**options, **steps}),
        **actions,
    }
    return type(WorkflowModel)(name, (WorkflowModel,), attrs)


OneDeadline = _deadlines_model("OneDeadline", 1, "One calendar deadline, on open.")
ManyDeadlines = _deadlines_model(
    "ManyDeadlines", 32, "32 deadlines: calendar, business-day, every-until, calculation."
)


class Intake(WorkflowModel):
    """An automatic step, for the safety net that queues records waiting in it."""

    class Workflow:
        intake = Step(action="work", on_success="done")
        done = Step(Transition("reopen", to="archived"))
        archived = Step()

    def work(self):
        pass


class Assignment(WorkflowModel):
    """Work queues (benchmarks/actionable.py): a policy per step through the owner, the
    reviewer, a permission, staff, and a ``when`` guard."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    priority = models.IntegerField(default=0)

    class Workflow:
        open = Step(
            Transition("take", to="working", when=Q(priority__gte=2)),
            policy=has_perm("benchapp.change_assignment"),
        )
        working = Step(
            Transition("finish", to="review"),
            Transition("drop", to="open"),
            policy=relates_to_actor_via("owner"),
        )
        review = Step(
            Transition("approve", to="done"),
            Transition("reject", to="working"),
            policy=any_of(relates_to_actor_via("reviewer"), is_staff),
        )
        done = Step(
            Transition("reopen", to="working"),
            Transition("archive", to="archived"),
            policy=all_of(relates_to_actor_via("owner"), has_perm("benchapp.change_assignment")),
        )
        archived = Step()


class Duty(WorkflowModel):
    """Work people hold (benchmarks/actionable_holders.py): ``open`` is triaged by whoever
    may change duties, anyone claims ``working``, staff claim ``review``, the owner closes
    ``done``; a record held by someone else is nobody else's work."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Workflow:
        assignment = True

        open = Step(
            Transition("start", to="working"),
            Transition("drop", to="archived"),
            policy=has_perm("benchapp.change_duty"),
        )
        working = Step(
            Transition("finish", to="review"), Transition("hand_back", to="open"), claim=True
        )
        review = Step(
            Transition("approve", to="done"),
            Transition("reject", to="working"),
            claim=True,
            policy=is_staff,
        )
        done = Step(
            Transition("reopen", to="working"),
            Transition("archive", to="archived"),
            policy=relates_to_actor_via("owner"),
        )
        archived = Step()


class Lapse(WorkflowModel):
    """Bulk moves (benchmarks/bulk.py): ``expire`` by hand, or by the timeout ``lapse``."""

    class Workflow:
        log = True

        pending = Step(
            Transition("expire", to="expired"),
            Timeout("lapse", fire_after="1d", transition_to="expired"),
        )
        expired = Step(Transition("renew", to="pending"))


# Throughput (benchmarks/throughput.py) ------------------------------------------------------


class Flow(WorkflowModel):
    """Records entering an automatic step whose action does nothing."""

    class Workflow:
        log = True
        auto = Step(action="work", on_success="done")
        done = Step()

    def work(self):
        pass


class Nudge(WorkflowModel):
    """An action timeout at a field's instant whose action does nothing."""

    remind_at = models.DateTimeField(null=True)

    class Workflow:
        log = True
        waiting = Step(
            Transition("close", to="closed"),
            Timeout("remind", fire_at="remind_at", action="remind"),
        )
        closed = Step()

    def remind(self):
        pass


# Events from outside (benchmarks/events.py) ---------------------------------------------


class Remittance(WorkflowModel):
    """A payment an outside system reports on: ``bench.paid`` moves it on at once,
    ``bench.cleared`` only once paid (earlier, it is buffered)."""

    ref = models.CharField(max_length=40, unique=True)

    class Workflow:
        log = True
        events = {
            "bench.paid": Receive(key="ref", transition="pay"),
            "bench.cleared": Receive(key="ref", transition="clear", buffer="1d"),
        }
        pending = Step(Transition("pay", to="paid"))
        paid = Step(Transition("clear", to="cleared"))
        cleared = Step()


# Versions (benchmarks/versions.py) ------------------------------------------------------


def _span(version, lapse, remind="1bd"):
    """A declaration of ``Spanned``'s shape: open and closed, flip and flop between them,
    a transition timeout of ``lapse`` and a reminder ``remind`` after the entry on open
    (``version`` None: none)."""
    numbered = {} if version is None else {"version": version}
    return type(
        f"SpanV{version}",
        (),
        {
            **numbered,
            "log": True,
            "open": Step(
                Transition("flip", to="closed"),
                Timeout("lapse", fire_after=lapse, transition_to="closed"),
                Timeout("remind", fire_after=remind, action="remind"),
            ),
            "closed": Step(Transition("flop", to="open")),
        },
    )


class Spanned(WorkflowModel):
    """Three versions declared (the current one is 3), differing in the lapse."""

    class Workflow(_span(3, "1d")):
        previous = [_span(1, "3d"), _span(2, "2d")]
        time_zone = BENCH_ZONE
        holidays = BENCH_HOLIDAYS

    def remind(self):
        pass


class Single(WorkflowModel):
    """``Spanned``'s version 3 on a model without versions."""

    class Workflow(_span(None, "1d")):
        time_zone = BENCH_ZONE
        holidays = BENCH_HOLIDAYS

    def remind(self):
        pass


class Upgraded(WorkflowModel):
    """Records to move from version 1 (a 3-day lapse) to version 2 (2 days); calendar
    durations, so a hand-written upgrade can compute the due instants in SQL."""

    class Workflow(_span(2, "2d", remind="1d")):
        previous = [_span(1, "3d", remind="1d")]

    def remind(self):
        pass
