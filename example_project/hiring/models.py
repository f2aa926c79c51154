"""A hiring pipeline: automatic screening, manual decisions behind a permission, a log."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from django_workflow import Route, Step, Timeout, Transition, Undo, WorkflowModel
from django_workflow.policies import has_perm

decide = has_perm("hiring.decide_candidate")

KEYWORDS = ("python", "django", "postgresql", "testing", "review", "design", "sql")


class Candidate(WorkflowModel):
    name = models.CharField(max_length=200)
    resume = models.TextField(blank=True)
    priority = models.CharField(
        max_length=20, default="normal", choices=[("normal", "Normal"), ("urgent", "Urgent")]
    )
    score = models.IntegerField(null=True, blank=True)
    offer_sent_at = models.DateTimeField(null=True, blank=True)
    reminders_sent = models.IntegerField(default=0)

    class Workflow:
        log = True
        undo = Undo(within="30m", same_actor=True)

        screening = Step(
            action="screen_resume",
            on_success=[Route("interview", when=Q(score__gte=3)), Route("rejected")],
            on_error="screening_failed",
        )
        interview = Step(
            Transition("make_offer", to="offer", undoable=True),
            Transition("reject", to="rejected", undoable=True),
            Transition(
                "triage",
                Route("fast_track", when=Q(priority="urgent")),
                Route("interview"),
                accept=["priority"],
            ),
            policy=decide,
        )
        fast_track = Step(
            Transition("make_offer", to="offer"), Transition("reject", to="rejected"), policy=decide
        )
        offer = Step(action="send_offer", on_success="offer_sent")
        offer_sent = Step(
            Transition("accept", to="hired"),
            Transition("decline", to="declined"),
            Timeout("offer_reminder", fire_after="2d", action="remind_candidate"),
            Timeout("offer_expiry", fire_after="7d", transition_to="declined"),
            policy=decide,
        )
        screening_failed = Step(Transition("rescreen", to="screening"), policy=decide)
        hired = Step(terminal=True)
        rejected = Step(terminal=True)
        declined = Step(terminal=True)

    class Meta:
        permissions = [("decide_candidate", "Can make hiring decisions")]

    def __str__(self) -> str:
        return self.name

    def screen_resume(self) -> None:
        if not self.resume.strip():
            raise ValueError("the resume is empty")
        words = self.resume.lower()
        self.score = sum(keyword in words for keyword in KEYWORDS)

    def send_offer(self) -> None:
        self.offer_sent_at = timezone.now()

    def remind_candidate(self) -> None:
        self.reminders_sent += 1
