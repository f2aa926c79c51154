"""Models of events from outside: correlation, buffers and replays."""

import time

from django.db import models
from django.db.models import Q

from django_workflow import (
    Receive,
    Step,
    Transition,
    WorkflowModel,
)
from django_workflow.policies import (
    is_staff,
)


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
