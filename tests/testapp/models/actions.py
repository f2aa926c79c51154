"""Models of code in transitions: ``when`` guards and actions that write what they read,
transitions named like the library's calls, and every column type the fast path binds."""

from django.db import models
from django.db.models import F, Q
from simple_history.models import HistoricalRecords

from django_workflow import Every, Receive, Route, Step, Timeout, Transition, Undo, WorkflowModel


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
