"""Models of versioned declarations: records finish on the version they started with."""

from django.db import models

from django_workflow import Step, Timeout, Transition, WorkflowModel


class TenderV1:
    """Version 1 as it was: no stock check; a three-day expiry; ``withdraw`` and a
    ``legacy`` step that version 2 dropped."""

    version = 1
    log = True
    draft = Step(Transition("submit", to="review"), Transition("shelve", to="legacy"))
    review = Step(
        Transition("approve", to="approved"),
        Transition("withdraw", to="draft"),
        Timeout("remind", fire_after="1d", action="remind"),
        Timeout("expire", fire_after="3d", transition_to="draft"),
    )
    legacy = Step(Transition("revive", to="draft"))
    approved = Step(terminal=True)


class Tender(WorkflowModel):
    """Version 2: an automatic stock check between draft and review, a two-day expiry."""

    stock = models.IntegerField(default=1)
    checks = models.IntegerField(default=0)
    reminders = models.IntegerField(default=0)

    class Workflow:
        version = 2
        previous = [TenderV1]
        log = True
        draft = Step(Transition("submit", to="checking"))
        checking = Step(action="check_stock", on_success="review")
        review = Step(
            Transition("approve", to="approved"),
            Timeout("remind", fire_after="1d", action="remind"),
            Timeout("expire", fire_after="2d", transition_to="draft"),
        )
        approved = Step(terminal=True)

    def check_stock(self):
        self.checks += 1

    def remind(self):
        self.reminders += 1


class Flat(WorkflowModel):
    """Tender's version 2 without versions: the same transition, for comparison."""

    stock = models.IntegerField(default=1)

    class Workflow:
        log = True
        draft = Step(Transition("submit", to="review"))
        review = Step(Transition("approve", to="approved"))
        approved = Step(terminal=True)
