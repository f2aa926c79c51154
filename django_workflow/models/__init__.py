"""The package's own tables: the transition log, work attempts, pending effects, the
timeline lease, and (from ``event_delivery``) the events delivered from outside.

Storage only: nothing here imports the engine. ``WorkflowModel``, the class
users subclass, lives in ``workflow_model``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from ..model.triggers import Trigger
from .event_delivery import EventDelivery as EventDelivery


class TransitionLog(models.Model):
    """One row per workflow event of any workflow model."""

    Trigger = Trigger

    # Indexed first in each of the indexes below, which serve lookups by type alone.
    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, db_index=False)
    object_id = models.CharField(max_length=255)
    record = GenericForeignKey("content_type", "object_id")
    from_state = models.CharField(max_length=100, blank=True)
    to_state = models.CharField(max_length=100)
    transition_name = models.CharField(max_length=200, blank=True)
    triggered_by = models.CharField("trigger", max_length=20, choices=Trigger.choices)
    occurred_at = models.DateTimeField(default=timezone.now)
    from_state_entered_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the record had entered from_state: the start of the stay "
        "this row ends, or happens in.",
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    actor_repr = models.CharField(max_length=255, blank=True)
    attempt = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    reverses = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reversed_by"
    )
    comment = models.TextField(blank=True, help_text="Why, in the caller's words.")
    data = models.JSONField(null=True, blank=True, help_text="What the caller attached.")
    on_behalf_of = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The holder the actor stood in for (an absence), when not the actor.",
    )

    class Meta:
        ordering = ["occurred_at", "id"]
        indexes = [
            models.Index(
                fields=["content_type", "object_id", "occurred_at"],
                name="workflow_log_record_idx",
            ),
            # The report's window: the stays begun in it, not the whole log.
            models.Index(
                fields=["content_type", "from_state_entered_at"],
                name="workflow_log_stay_idx",
            ),
            # The report's breach counts read timeouts' rows from this index alone.
            models.Index(
                fields=[
                    "content_type",
                    "from_state_entered_at",
                    "from_state",
                    "transition_name",
                    "occurred_at",
                    "object_id",
                    "triggered_by",
                ],
                condition=models.Q(triggered_by="timeout"),
                name="workflow_log_timeout_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.from_state or '-'} → {self.to_state} ({self.triggered_by})"

    @property
    def description(self) -> str:
        """What the row did, in words: the transition's name, or "undo of reject" /
        "redo of reject" for an undo (load ``reverses__reverses`` alongside)."""
        reversal = self.reversal()
        return f"{reversal[0]} of {reversal[1]}" if reversal else self.transition_name

    def reversal(self) -> tuple[str, str] | None:
        """For an undo's row, ``("undo" | "redo", the transition it took back or made
        again)``; ``None`` for any other row."""
        if self.triggered_by != Trigger.UNDO or self.reverses is None:
            return None
        row, hops = self.reverses, 1
        while row.triggered_by == Trigger.UNDO and row.reverses is not None:
            row, hops = row.reverses, hops + 1
        return ("undo" if hops % 2 else "redo"), row.transition_name

    @property
    def undone_by_redo(self) -> bool:
        """Whether undoing this row makes its transition again: the row is an undo."""
        reversal = self.reversal()
        return reversal is not None and reversal[0] == "undo"


class WorkflowOverview(TransitionLog):
    """The admin's "Workflows" page: where records stand, per model and step.

    No table of its own; it exists so the page has a place in the admin index.
    """

    class Meta:
        proxy = True
        verbose_name = "workflow"
        verbose_name_plural = "workflows"


class WorkAttempt(models.Model):
    """The attempts of one unit of work for one record, in the current round.

    An attempt is spent when its action raised, missed every route or ran past
    its time limit. An attempt cut short by a stop or a crash is not spent: it
    is counted in ``interruptions`` and runs again. While an attempt runs,
    ``holder`` names the worker running it and ``alive_until`` is renewed by
    that worker's heartbeat; past it, any worker may take the attempt over.
    A worker seen alive past the time limit was killed by the time limit.
    """

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.CharField(max_length=255)
    work = models.CharField(max_length=200)
    round_key = models.DateTimeField(
        help_text="The round counted: the step entry, or the deadline that came due."
    )
    attempts = models.PositiveIntegerField(default=0, help_text="Attempts spent.")
    interruptions = models.PositiveIntegerField(
        default=0, help_text="Attempts cut short by a stop or a crash since the last spent one."
    )
    retry_at = models.DateTimeField(
        null=True, blank=True, help_text="No attempt starts before this instant."
    )
    halted = models.BooleanField(default=False)
    last_error = models.TextField(blank=True)
    holder = models.CharField(
        max_length=200, blank=True, help_text="The worker running an attempt now."
    )
    pid = models.PositiveIntegerField(null=True, blank=True)
    running_since = models.DateTimeField(null=True, blank=True)
    seen_at = models.DateTimeField(
        null=True, blank=True, help_text="When the worker was last seen running the attempt."
    )
    alive_until = models.DateTimeField(
        null=True, blank=True, help_text="The running attempt counts as alive until then."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["content_type", "object_id", "work"], name="workflow_attempt_unique"
            )
        ]
        indexes = [
            models.Index(
                fields=["alive_until"],
                condition=models.Q(running_since__isnull=False),
                name="workflow_attempt_running_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.work} of {self.object_id}: {self.attempts} attempt(s)"


class PendingEffect(models.Model):
    """A ``Step(on_enter=...)`` effect owed to one entry of a record into a step.

    Written in the transaction of the move that entered the step, one row per
    entry (a self-loop twice owes two); deleted in the transaction the effect
    commits in, so it runs at least once per entry and commits once, even after
    the record moved on. A failed attempt is counted here; ``due_at`` is when
    the next may start, and is empty once the attempts ran out (halted). A run
    is marked first (``running_since``), so one cut short by a stop or a crash
    is counted as an interruption when the next run takes it over.
    """

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, db_index=False)
    object_id = models.CharField(max_length=255)
    step = models.CharField(max_length=100, help_text="The step entered.")
    entered_at = models.DateTimeField(help_text="When the record entered the step.")
    due_at = models.DateTimeField(
        null=True, blank=True, help_text="No attempt starts before this; empty once halted."
    )
    attempts = models.PositiveIntegerField(default=0, help_text="Attempts spent.")
    last_error = models.TextField(blank=True)
    interruptions = models.PositiveIntegerField(
        default=0, help_text="Runs cut short by a stop or a crash since the last spent attempt."
    )
    running_since = models.DateTimeField(
        null=True, blank=True, help_text="When the run in progress (or cut short) began."
    )
    alive_until = models.DateTimeField(
        null=True, blank=True, help_text="Past this, a run still marked counts as cut short."
    )

    class Meta:
        indexes = [
            # The poll's question, "which effects are due?", read from this index alone.
            models.Index(
                fields=["content_type", "due_at"],
                condition=models.Q(due_at__isnull=False),
                name="workflow_effect_due_idx",
            ),
            models.Index(fields=["content_type", "object_id"], name="workflow_effect_record_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.step}.on_enter of {self.object_id} (entered {self.entered_at})"


class DeadlineDeclaration(models.Model):
    """What each model's stored due instants were computed from, as a fingerprint.

    A worker starting with a different declaration of deadlines (a duration,
    a step, the time zone or holidays changed) computes them again.
    """

    model = models.CharField(max_length=200, unique=True)
    fingerprint = models.CharField(max_length=64)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.model}: {self.fingerprint[:12]}"


class WorkflowLease(models.Model):
    """Who leads the precise timeline, and until when."""

    name = models.CharField(max_length=100, unique=True)
    holder = models.CharField(max_length=200)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name}: {self.holder} until {self.expires_at}"


class WorkflowVote(models.Model):
    """One actor's vote for a ``quorum`` transition during one stay of a record in a step.

    A stay is named by the instant the record entered the step. A step change
    deletes the record's votes in its own transaction (the log keeps them), so
    votes of an earlier stay never count again. The unique constraint makes a
    second vote by the same actor in the same stay fail in the database,
    whatever the number of connections racing.
    """

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, db_index=False)
    object_id = models.CharField(max_length=255)
    transition = models.CharField(max_length=200)
    step = models.CharField(max_length=100, help_text="The step the record was in.")
    entered_at = models.DateTimeField(help_text="When the record entered the step: the stay.")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    actor_key = models.CharField(max_length=255, help_text="Who voted, as one vote counts.")
    actor_repr = models.CharField(max_length=255, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created", "id"]
        constraints = [
            # Its index, led by the record, also serves every lookup of a record's votes.
            models.UniqueConstraint(
                fields=["content_type", "object_id", "transition", "entered_at", "actor_key"],
                name="workflow_vote_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.actor_repr} for {self.transition} on {self.object_id}"


class QueuedRun(models.Model):
    """A run of one automatic step of one model is queued or running: entries into the
    step queue no other until the run finds nothing left and drops this row (or its
    lease, ``alive_until``, runs out: the run was lost)."""

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    step = models.CharField(max_length=100)
    alive_until = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["content_type", "step"], name="workflow_queued_run")
        ]

    def __str__(self) -> str:
        return f"{self.content_type.model}.{self.step} queued"


class AbsenceQuerySet(models.QuerySet):
    def active(self, at: Any = None) -> AbsenceQuerySet:
        """The absences under way at ``at`` (default: now): started, not yet ended."""
        at = timezone.now() if at is None else at
        return self.filter(starts_at__lte=at, ends_at__gt=at)


class Absence(models.Model):
    """While ``user`` is away (``starts_at`` to ``ends_at``), ``delegate`` may act on the
    records ``user`` holds; the log names the delegate as actor, on behalf of ``user``."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="workflow_absences"
    )
    delegate = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="workflow_stand_ins"
    )
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()

    objects = AbsenceQuerySet.as_manager()

    class Meta:
        ordering = ["-starts_at"]
        indexes = [
            models.Index(fields=["delegate", "ends_at"], name="workflow_absence_delegate_idx"),
            models.Index(fields=["user", "ends_at"], name="workflow_absence_user_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")),
                name="workflow_absence_ends_after_start",
            ),
            models.CheckConstraint(
                condition=~models.Q(delegate=models.F("user")),
                name="workflow_absence_other_delegate",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} away, {self.delegate} stands in"

    def clean(self) -> None:
        errors = {}
        if self.starts_at and self.ends_at and self.ends_at <= self.starts_at:
            errors["ends_at"] = "An absence ends after it starts."
        if self.user_id is not None and self.user_id == self.delegate_id:
            errors["delegate"] = "A user cannot stand in for themselves: choose someone else."
        if errors:
            raise ValidationError(errors)
