"""Support tickets: priority routing; a resolution SLA in Croatian business hours that
runs while the ticket is worked on and pauses while it waits on the customer
(docs/slas.md); four hours for an urgent ticket; a weekday-morning reminder to customers
who owe an answer; and escalated tickets that one manager claims and holds
(docs/holding-work.md)."""

import holidays
from django.db import models
from django.db.models import Q
from django.urls import reverse

from django_workflow import Every, Route, Sla, Step, Timeout, Transition, WorkflowModel
from django_workflow.policies import is_staff


class Ticket(WorkflowModel):
    subject = models.CharField(max_length=200)
    priority = models.CharField(
        max_length=10,
        default="normal",
        choices=[("normal", "Normal"), ("urgent", "Urgent")],
    )
    team = models.CharField(
        max_length=10,
        default="technical",
        choices=[("technical", "Technical"), ("billing", "Billing")],
    )
    sla_warnings = models.IntegerField(default=0)
    stale_flags = models.IntegerField(default=0)
    customer_reminders = models.IntegerField(default=0)

    class Workflow:
        log = True
        assignment = True  # a ticket can have a holder: record.claim/release/assign
        time_zone = "Europe/Zagreb"
        holidays = holidays.country_holidays("HR")
        working_hours = "08:00-16:00"
        slas = {
            # Three working days to resolve, counted from arrival while the ticket is
            # worked on and paused while it waits on the customer: the reply goes on
            # from there, never from zero. The team lead hears of it after two; at three
            # the ticket is escalated, as "escalate" reads in its step (a new ticket's
            # breach is only marked: it offers no "escalate").
            "resolution": Sla(
                "24bh",
                runs_in=["new", "technical", "billing", "urgent", "breached", "management"],
                warn_at=2 / 3,
                on_warn="warn_team_lead",
                on_breach="escalate",
            ),
        }

        new = Step(
            Transition(
                "triage",
                Route("urgent", when=Q(priority="urgent")),
                Route("billing", when=Q(team="billing")),
                Route("technical"),
                accept=["priority"],
            ),
        )
        # "escalate" means something different in each queue.
        technical = Step(
            Transition("resolve", to="resolved"),
            Transition("escalate", to="urgent"),
            Transition("ask_customer", to="waiting_on_customer"),
        )
        billing = Step(
            Transition("resolve", to="resolved"),
            Transition("escalate", to="urgent"),
            Transition("ask_customer", to="waiting_on_customer"),
        )
        # Found urgent: four hours around the clock. A timeout keeps this promise, as
        # a ticket enters "urgent" once and never waits on the customer from it.
        urgent = Step(
            Transition("resolve", to="resolved"),
            Transition("escalate", to="management"),
            Timeout("sla_warning", fire_after="2h", action="warn_team_lead", label="SLA warning"),
            Timeout("sla_breach", fire_after="4h", transition_to="breached", label="SLA breach"),
        )
        waiting_on_customer = Step(
            Transition("customer_replied", to="technical"),
            Transition("resolve", to="resolved"),
            Every("stale_check", interval="30d", action="flag_stale"),
            # 09:00 in Zagreb on working days, at most three times per wait.
            Every(
                "customer_reminder",
                cron="0 9 * * mon-fri",
                action="remind_customer",
                business_days_only=True,
                times=3,
                label="Reminder to the customer",
            ),
        )
        breached = Step(
            Transition("resolve", to="resolved"), Transition("escalate", to="management")
        )
        # One manager claims an escalated ticket; only they (or their stand-in) resolve
        # it. A claim that has not resolved it within a business day is let go.
        management = Step(Transition("resolve", to="resolved"), claim=True, release_after="1bd")
        resolved = Step(terminal=True)

        policies = {"escalate": is_staff}

    def __str__(self) -> str:
        return self.subject

    def get_absolute_url(self) -> str:
        return reverse("agent_ticket", args=[self.pk])

    def warn_team_lead(self) -> None:
        self.sla_warnings += 1

    def flag_stale(self) -> None:
        self.stale_flags += 1

    def remind_customer(self) -> None:
        self.customer_reminders += 1
