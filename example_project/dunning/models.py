"""Subscription dunning: a grace period ending on a date of the record, then escalation."""

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from django_workflow import Every, Step, Timeout, Transition, WorkflowModel


def grace_must_end_later(value: datetime | None) -> None:
    """A grace period that already ended would send the record to dunning at the next poll."""
    if value is not None and value <= timezone.now():
        raise ValidationError(
            "The grace period must end in the future: %(value)s has passed.",
            code="grace_in_the_past",
            params={"value": timezone.localtime(value).strftime("%Y-%m-%d %H:%M %Z")},
        )


class Subscription(WorkflowModel):
    customer = models.CharField(max_length=200)
    grace_ends_at = models.DateTimeField(null=True, blank=True)
    dunning_emails = models.IntegerField(default=0)
    final_notices = models.IntegerField(default=0)

    class Workflow:
        log = True
        check_interval = "0 * * * *"  # hourly: these deadlines are days long

        active = Step(Transition("payment_failed", to="grace", accept=["grace_ends_at"]))
        grace = Step(
            Transition("pay", to="active"),
            Timeout("grace_over", fire_after="1h", field="grace_ends_at", transition_to="dunning"),
        )
        dunning = Step(
            Transition("pay", to="active"),
            Every("dunning_email", interval="3d", action="send_dunning_email"),
            Timeout("suspension", fire_after="9d", transition_to="suspended"),
        )
        suspended = Step(
            Transition("pay", to="active"),
            Timeout("final_notice", fire_after="14d", action="send_final_notice"),
            # 9 days of dunning + 21 suspended: cancelled 30 days after the grace ended.
            Timeout("cancellation", fire_after="21d", transition_to="cancelled"),
        )
        cancelled = Step(terminal=True)

    def __str__(self) -> str:
        return self.customer

    def send_dunning_email(self) -> None:
        self.dunning_emails += 1

    def send_final_notice(self) -> None:
        self.final_notices += 1
