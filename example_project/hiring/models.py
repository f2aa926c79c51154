"""A hiring pipeline: automatic screening with retries, an interview on a date of the
record, decisions by hiring managers (undoable for 30 minutes), offer deadlines, and a
sub-minute nudge on the precise scheduler."""

from datetime import timedelta

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from django_workflow import Retry, Route, Step, Timeout, Transition, Undo, WorkflowModel
from django_workflow.policies import has_perm

recruiters = has_perm("hiring.screen_candidate")
hiring_managers = has_perm("hiring.decide_candidate")

KEYWORDS = ("python", "django", "postgresql", "testing", "review", "design", "sql")


class Candidate(WorkflowModel):
    name = models.CharField(max_length=200)
    resume = models.TextField(blank=True)
    priority = models.CharField(
        max_length=20, default="normal", choices=[("normal", "Normal"), ("urgent", "Urgent")]
    )
    score = models.IntegerField(null=True, blank=True)
    interview_at = models.DateTimeField(null=True, blank=True)
    offer_sent_at = models.DateTimeField(null=True, blank=True)
    reminders_sent = models.IntegerField(default=0)
    nudges_sent = models.IntegerField(default=0)
    #: For the demo: booking fails, and the automatic step without on_error halts.
    calendar_down = models.BooleanField(
        default=False, help_text="Booking the interview fails while this is ticked."
    )

    class Workflow:
        log = True
        scheduler = "precise"
        undo = Undo(within="30m", same_actor=True)

        screening = Step(
            action="screen_resume",
            on_success=[Route("scheduling", when=Q(score__gte=3)), Route("rejected")],
            on_error="screening_failed",
            retry=Retry(max_attempts=3, backoff="30s"),
        )
        scheduling = Step(action="book_interview", on_success="awaiting_interview")
        awaiting_interview = Step(
            Timeout("interview_held", fire_at="interview_at", transition_to="decision"),
            label=_("Interview booked"),
        )
        decision = Step(
            Transition("make_offer", to="offer", undoable=True, label=_("Make an offer")),
            Transition("reject", to="rejected", undoable=True),
            Timeout("nudge", fire_after="45s", action="nudge_hiring_manager"),
            policy=hiring_managers,
            label=_("Awaiting a decision"),
        )
        offer = Step(action="send_offer", on_success="offer_sent")
        offer_sent = Step(
            Transition("accept", to="hired"),
            Transition("decline", to="declined"),
            Timeout("offer_reminder", fire_after="2d", action="remind_candidate"),
            Timeout("offer_expiry", fire_after="7d", transition_to="declined"),
            policy=hiring_managers,
        )
        screening_failed = Step(Transition("rescreen", to="screening"), policy=recruiters)
        hired = Step(terminal=True)
        rejected = Step(terminal=True)
        declined = Step(terminal=True)

    class Meta:
        permissions = [
            ("screen_candidate", "Can screen candidates (recruiters)"),
            ("decide_candidate", "Can make hiring decisions (hiring managers)"),
        ]

    def __str__(self) -> str:
        return self.name

    def screen_resume(self) -> None:
        if not self.resume.strip():
            raise ValueError("the resume is empty")
        words = self.resume.lower()
        self.score = sum(keyword in words for keyword in KEYWORDS)

    def book_interview(self) -> None:
        if self.calendar_down:
            raise ConnectionError("the interview calendar did not answer")
        self.interview_at = timezone.now() + timedelta(days=2)

    def nudge_hiring_manager(self) -> None:
        self.nudges_sent += 1

    def send_offer(self) -> None:
        self.offer_sent_at = timezone.now()

    def remind_candidate(self) -> None:
        self.reminders_sent += 1
