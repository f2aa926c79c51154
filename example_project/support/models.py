"""Support ticket SLA: priority routing, per-queue SLAs in Croatian business days,
a weekday-morning reminder to customers who owe an answer, and escalated tickets
that one manager claims and holds (docs/holding-work.md)."""

import holidays
from django.db import models
from django.db.models import Q
from django.urls import reverse

from django_workflow import Every, Route, Step, Timeout, Transition, WorkflowModel
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
            Timeout("sla_warning", fire_after="2bd", action="warn_team_lead", label="SLA warning"),
            Timeout("sla_breach", fire_after="3bd", transition_to="breached", label="SLA breach"),
        )
        billing = Step(
            Transition("resolve", to="resolved"),
            Transition("escalate", to="urgent"),
            Transition("ask_customer", to="waiting_on_customer"),
            Timeout("sla_warning", fire_after="1bd", action="warn_team_lead", label="SLA warning"),
            Timeout("sla_breach", fire_after="2bd", transition_to="breached", label="SLA breach"),
        )
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
