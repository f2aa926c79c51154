"""Models of votes: quorum transitions."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from django_workflow import (
    Step,
    Transition,
    WorkflowModel,
)
from django_workflow.policies import (
    has_perm,
    relates_to_actor_via,
)


class Motion(WorkflowModel):
    """Votes in work queues (docs/votes.md): ``carry`` and ``reject`` each need two
    members' votes (``reject`` only while the motion is not urgent); only its mover may
    ``withdraw`` it. ``has_perm`` is exact with Django's backend alone and asked per record
    beside django-rules, so both paths of ``actionable_by`` are reached."""

    mover = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    urgent = models.BooleanField(default=False)

    class Workflow:
        policies = {
            "carry": has_perm("testapp.change_motion"),
            "reject": has_perm("testapp.change_motion"),
            "withdraw": relates_to_actor_via("mover"),
        }

        open = Step(
            Transition("carry", to="carried", quorum=2),
            Transition("reject", to="rejected", quorum=2, when=Q(urgent=False)),
            Transition("withdraw", to="withdrawn"),
        )
        carried = Step()
        rejected = Step()
        withdrawn = Step()
