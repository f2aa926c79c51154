"""Models of deadlines: timeouts, everys, business days, floors and the precise timeline."""

import os
import threading
import time
import uuid
from datetime import date, timedelta

import holidays
from django.db import models
from django.utils import timezone

from django_workflow import (
    Every,
    Retry,
    Step,
    Timeout,
    Transition,
    Undo,
    WorkflowModel,
)

from .automatic import SideEffect


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


class Pause(WorkflowModel):
    """An automatic step whose action waits on a lock of its own (a thread's result, as
    an SDK's transfer would): a busy worker, not a wedged one."""

    seconds = models.FloatField(default=0)

    class Workflow:
        waiting = Step(action="wait_on_a_lock", on_success="done", time_limit="2m")
        done = Step()

    def wait_on_a_lock(self):
        threading.Event().wait(self.seconds)
