"""Document approval: two sign-offs by two different people, reminders, expiry."""

from django.db import models
from django.db.models import Q

from django_workflow import Every, Step, Timeout, Transition, WorkflowModel


def signs_as_themselves(actor, record, name):
    """Each sign-off names the actor signing, and the second comes from someone else.

    The policy sees the record with the values the call accepts; the admin
    fills the signer in from the logged-in user (see admin.py), so no form asks
    for a name.
    """
    me = getattr(actor, "username", None)
    if not me:
        return False
    if record.state == "in_review":
        return record.first_signer == me
    return record.second_signer == me and record.first_signer != me


def _signable_by(actor):
    """For work queues: the documents ``actor`` could sign, once the admin fills the
    signer in from the logged-in user (the policy itself sees the filled-in values)."""
    me = getattr(actor, "username", None)
    if not me:
        return Q(pk__in=[])
    return Q(state="in_review") | (Q(state="second_review") & ~Q(first_signer=me))


signs_as_themselves.q = _signable_by


def review_deadlines():
    return (
        Every("reminder", interval="2d", action="remind_approvers"),
        Timeout("expiry", fire_after="14d", transition_to="expired"),
    )


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
            Transition("approve", to="second_review", accept=["first_signer"]),
            Transition("request_changes", to="draft"),
            *review_deadlines(),
        )
        second_review = Step(
            Transition("approve", to="approved", accept=["second_signer"]),
            Transition("request_changes", to="draft"),
            *review_deadlines(),
        )
        approved = Step(terminal=True)
        expired = Step(terminal=True)

        policies = {"approve": signs_as_themselves}

    def __str__(self) -> str:
        return self.title

    def sign(self, user):
        """Record ``user``'s sign-off: the first one waits for a second approver."""
        if self.state == "in_review":
            return self.approve(actor=user, first_signer=user.username)
        return self.approve(actor=user, second_signer=user.username)

    def remind_approvers(self):
        self.reminders_sent += 1
