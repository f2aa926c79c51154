"""Models of parents and children: cascades and joins."""

import time

from django.db import models
from django.db.models import Q

from django_workflow import (
    ConditionUnmet,
    Join,
    Step,
    Timeout,
    Transition,
    Undo,
    WorkflowModel,
)
from django_workflow.policies import (
    is_staff,
)


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
