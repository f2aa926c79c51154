"""Models of holders: claims, queues, stand-ins and object permissions."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from django_workflow import (
    Step,
    Transition,
    WorkflowModel,
)
from django_workflow.policies import (
    actor_attribute_equals,
    all_of,
    any_of,
    has_perm,
    is_staff,
    relates_to_actor_via,
)


class Team(models.Model):
    """Who a case's team is: its lead, and its members (a to-many relation)."""

    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", blank=True)

    def __str__(self) -> str:
        return f"team {self.pk}"


def in_the_region(actor, record, name):
    """A custom policy with no filter form: the actor's ``last_name`` is the case's region.
    ``q = None`` says so on purpose, so the check does not warn; it is asked per record."""
    return actor is not None and getattr(actor, "last_name", None) == record.region


in_the_region.q = None


class Case(WorkflowModel):
    """Work queues: every shipped policy, nested, through relation paths (to-many too),
    ``when`` guards on fields and on a calculation, a callable ``when``, ``from_any_step``
    and a custom policy asked record by record."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL)
    watchers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", blank=True)
    priority = models.IntegerField(default=0)
    amount = models.IntegerField(default=0)
    region = models.CharField(max_length=20, blank=True)
    urgent = models.BooleanField(default=False)

    class Workflow:
        calculations = {"weight": F("priority") * 10 + F("amount")}
        from_any_step = [Transition("withdraw", to="withdrawn", when=Q(amount__lt=50))]
        policies = {
            "withdraw": relates_to_actor_via("owner"),
            "sign_off": in_the_region,
            "recheck": is_staff,
        }

        triage = Step(
            Transition("accept", to="working", when=Q(priority__gte=2)),
            Transition("dismiss", to="withdrawn", when=Q(weight__lt=40)),
            policy=any_of(
                relates_to_actor_via("team__members"),
                all_of(has_perm("testapp.change_case"), is_staff),
            ),
        )
        working = Step(
            Transition("resolve", to="resolved"),
            Transition("submit", to="review"),
            Transition("escalate", to="escalated", when=lambda case: case.urgent),
            policy=any_of(relates_to_actor_via("owner"), relates_to_actor_via("watchers")),
        )
        escalated = Step(
            Transition("settle", to="resolved"),
            policy=all_of(
                relates_to_actor_via("team__lead"),
                any_of(is_staff, actor_attribute_equals("first_name", "lead")),
            ),
        )
        review = Step(Transition("sign_off", to="resolved"), Transition("recheck", to="checking"))
        checking = Step(action="verify", on_success="review")
        resolved = Step(Transition("reopen", to="working"), policy=has_perm("testapp.change_case"))
        withdrawn = Step(terminal=True)

    def verify(self):
        pass


class Errand(WorkflowModel):
    """Work people hold (docs/holding-work.md): anyone may start an open errand; once
    started, only its holder (or whoever stands in for them) finishes it, and a claim
    that has not moved it within a day is let go; reviews are held too, and only staff
    may claim them."""

    title = models.CharField(max_length=100, blank=True)

    class Workflow:
        log = True
        assignment = True

        open = Step(Transition("start", to="working"), Transition("drop", to="dropped"))
        working = Step(
            Transition("finish", to="review"),
            Transition("note", to="working"),
            Transition("hand_back", to="open"),
            claim=True,
            release_after="1d",
        )
        review = Step(Transition("approve", to="done"), claim=True, policy=is_staff)
        done = Step()
        dropped = Step()

    def __str__(self):
        return self.title or f"Errand {self.pk}"
