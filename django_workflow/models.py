"""``WorkflowModel``, the base class users subclass, and the ``TransitionLog``."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils import timezone

from . import rearming
from .compiled import CompiledWorkflow
from .generation import WorkflowModelBase


class WorkflowQuerySet(models.QuerySet):
    """Keeps ``bulk_create`` and ``update`` on the workflow path.

    ``bulk_create`` logs the initial rows and queues automatic steps;
    ``update`` re-arms action timeouts whose anchor it moves later.
    """

    def update(self, **values: Any) -> int:
        workflow = getattr(self.model, "workflow", None)
        if workflow is not None:
            values = rearming.rearm_in_update(workflow, values)
        return super().update(**values)

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Any]:
        from . import engine

        created = super().bulk_create(objs, *args, **kwargs)
        engine.records_created([obj for obj in created if obj.pk is not None], using=self.db)
        return created


WorkflowManager = models.Manager.from_queryset(WorkflowQuerySet)


class WorkflowModel(models.Model, metaclass=WorkflowModelBase):
    """Subclass this and declare an inner ``class Workflow:``."""

    workflow: ClassVar[CompiledWorkflow]

    objects = WorkflowManager()

    class Meta:
        abstract = True

    def save(self, *args: Any, update_fields: Any = None, **kwargs: Any) -> None:
        adding = self._state.adding
        workflow = type(self).workflow
        if workflow is not None and not adding:
            update_fields = rearming.rearm_before_save(self, update_fields)
        super().save(*args, update_fields=update_fields, **kwargs)
        rearming.remember(self)
        if adding and workflow is not None:
            from . import engine

            engine.records_created([self], using=self._state.db)

    @classmethod
    def from_db(cls, db: Any, field_names: Any, values: Any, **kwargs: Any) -> WorkflowModel:
        instance = super().from_db(db, field_names, values, **kwargs)
        rearming.remember(instance)
        return instance

    def pending_deadlines(self) -> list[Any]:
        """The current step's deadlines that will fire as things stand, soonest first."""
        from .scheduling import pending_deadlines

        return pending_deadlines(self)

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        super().refresh_from_db(*args, **kwargs)
        rearming.remember(self)

    def transition(
        self, name: str, actor: Any = None, *, authorize: bool = True, **accepted: Any
    ) -> WorkflowModel:
        """Run transition ``name`` from the current step; see the docs for the errors."""
        from . import engine

        return engine.run_transition(self, name, actor=actor, authorize=authorize, **accepted)

    def undo(self, actor: Any = None) -> WorkflowModel:
        """Rewind the newest undoable step change (or redo an undo); see ``Undo``."""
        from .undo import run_undo

        return run_undo(self, actor)

    def history(self) -> Any:
        """Every transition log row of this record, oldest first."""
        from .history import history

        return history(self)

    def effective_history(self) -> list[Any]:
        """The log rows whose effect stands: undone rows and undo rows left out."""
        from .history import effective_history

        return effective_history(self)

    def state_at(self, instant: Any) -> str | None:
        """The step this record was in at ``instant``, from the log."""
        from .history import state_at

        return state_at(self, instant)

    @property
    def current_step(self) -> str:
        """The name of the step this record is in."""
        return getattr(self, type(self).workflow.state_attribute)

    def available_actions(self, actor: Any = None) -> list[str]:
        """The transitions ``actor`` may call now, in declaration order."""
        workflow = type(self).workflow
        step = self.current_step
        if step not in workflow.steps or not workflow.steps[step].is_manual:
            return []
        return [
            transition.name
            for transition in workflow.steps[step].transitions
            if _allowed(workflow.policy_for(step, transition.name), actor, self, transition.name)
        ]


def workflow_models(app_configs: Any = None, *, declared: bool = True) -> list[Any]:
    """The concrete workflow models (proxies share their model's); ``declared=False``
    also returns those missing a ``Workflow``, for the checks to report."""
    from django.apps import apps

    return [
        model
        for config in app_configs or apps.get_app_configs()
        for model in config.get_models()
        if issubclass(model, WorkflowModel)
        and not model._meta.proxy
        and (model.workflow is not None or not declared)
    ]


def _allowed(policy: Any, actor: Any, record: Any, name: str) -> bool:
    return policy is None or bool(policy(actor, record, name))


class TransitionLog(models.Model):
    """One row per workflow event of any workflow model."""

    class Trigger(models.TextChoices):
        INITIAL = "initial"
        MANUAL = "manual"
        AUTOMATIC = "automatic"
        TIMEOUT = "timeout"
        ERROR_PATH = "error_path"
        UNDO = "undo"
        FAILED = "failed"
        HALTED = "halted"

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.CharField(max_length=255)
    record = GenericForeignKey("content_type", "object_id")
    from_state = models.CharField(max_length=100, blank=True)
    to_state = models.CharField(max_length=100)
    transition_name = models.CharField(max_length=200, blank=True)
    triggered_by = models.CharField(max_length=20, choices=Trigger.choices)
    occurred_at = models.DateTimeField(default=timezone.now)
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

    class Meta:
        ordering = ["occurred_at", "id"]
        indexes = [
            models.Index(
                fields=["content_type", "object_id", "occurred_at"],
                name="workflow_log_record_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.from_state or '-'} → {self.to_state} ({self.triggered_by})"


class WorkAttempt(models.Model):
    """The attempts of one unit of work for one record, in the current round.

    An automatic step's attempt is counted before its action runs, so an
    attempt whose worker was killed (a time limit, a crash) still counts.
    """

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.CharField(max_length=255)
    work = models.CharField(max_length=200)
    round_key = models.DateTimeField(
        help_text="The round counted: the step entry, or the deadline that came due."
    )
    attempts = models.PositiveIntegerField(default=0)
    retry_at = models.DateTimeField(
        null=True, blank=True, help_text="No attempt starts before this instant."
    )
    halted = models.BooleanField(default=False)
    last_error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["content_type", "object_id", "work"], name="workflow_attempt_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.work} of {self.object_id}: {self.attempts} attempt(s)"


class WorkflowLease(models.Model):
    """Who leads the precise timeline, and until when."""

    name = models.CharField(max_length=100, unique=True)
    holder = models.CharField(max_length=200)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name}: {self.holder} until {self.expires_at}"
