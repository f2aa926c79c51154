"""Document approval: two approvals by two different people, reminders, expiry.

``quorum=2`` counts the approvals: the first is a vote (the document stays in
review), the second, by someone else, approves it. A request for changes by any
reviewer sends it back to draft and discards the votes cast so far (a veto).
"""

from django.db import models

from django_workflow import Every, Step, Timeout, Transition, WorkflowModel


class Document(WorkflowModel):
    title = models.CharField(max_length=200)
    reminders_sent = models.IntegerField(default=0)

    class Workflow:
        log = True
        check_interval = "0 * * * *"

        draft = Step(Transition("submit", to="in_review"))
        in_review = Step(
            Transition("approve", to="approved", quorum=2),
            Transition("request_changes", to="draft"),
            Every("reminder", interval="2d", action="remind_approvers"),
            Timeout("expiry", fire_after="14d", transition_to="expired"),
        )
        approved = Step(terminal=True)
        expired = Step(terminal=True)

    def __str__(self) -> str:
        return self.title

    def remind_approvers(self) -> None:
        self.reminders_sent += 1
