"""Document approval: two sign-offs through one `approve`, reminders, expiry."""

from django.db import models
from django.db.models import Q

from django_workflow import Every, Route, Step, Timeout, Transition, WorkflowModel


def not_the_first_signer(actor, record, name):
    """The second sign-off must come from someone else."""
    return actor is not None and getattr(actor, "username", None) != record.first_signer


class Document(WorkflowModel):
    title = models.CharField(max_length=200)
    first_signer = models.CharField(max_length=150, blank=True)
    second_signer = models.CharField(max_length=150, blank=True)
    reminders_sent = models.IntegerField(default=0)

    class Workflow:
        log = True
        check_interval = "0 * * * *"

        draft = Step(Transition("submit", to="in_review"))
        in_review = Step(
            # The first sign-off loops back to review; the second one approves.
            Transition(
                "approve",
                Route("approved", when=~Q(second_signer="")),
                Route("in_review"),
                accept=["first_signer", "second_signer"],
            ),
            Transition("request_changes", to="draft"),
            Every("reminder", interval="2d", action="remind_approvers"),
            Timeout("expiry", fire_after="14d", transition_to="expired"),
        )
        approved = Step(terminal=True)
        expired = Step(terminal=True)

        policies = {"approve": not_the_first_signer}

    def __str__(self) -> str:
        return self.title

    def sign(self, user):
        """Record ``user``'s sign-off: the first one waits for a second approver."""
        if not self.first_signer:
            return self.approve(actor=user, first_signer=user.username)
        return self.approve(actor=user, second_signer=user.username)

    def remind_approvers(self):
        self.reminders_sent += 1
