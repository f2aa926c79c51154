"""Models of service-level clocks."""

from datetime import date

from django.db import models

from django_workflow import (
    Sla,
    Step,
    Timeout,
    Transition,
    WorkflowModel,
)


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
