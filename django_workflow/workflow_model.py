"""``WorkflowModel``: the class users subclass, its manager and its queryset.

A facade: each method hands over to the engine, the history or the
scheduling module. The engine (and bulk moves and undo, built on it) is
imported by the methods that run it, so loading the models (as ``manage.py
check`` does) loads no runtime. The workflow's own columns (the step, the entry instant,
the fired columns) are the engine's: ``save()`` of an existing record leaves
them alone.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self, TypeVar

from asgiref.sync import sync_to_async
from django.db import models, transaction

from . import actionable, history, rearming, scheduling, service_levels
from .compiled import CompiledWorkflow
from .generation import WorkflowModelBase
from .registry import workflow_models as workflow_models  # where it lived before

#: The model a queryset holds, for type checkers (``WorkflowQuerySet[Order]``).
_Model = TypeVar("_Model", bound=models.Model, covariant=True)


class WorkflowQuerySet(models.QuerySet[_Model, _Model]):
    """Keeps ``bulk_create`` and ``update`` on the workflow path.

    ``bulk_create`` logs the initial rows and queues automatic steps;
    ``update`` re-arms action timeouts whose anchor it moves later and stores
    the due instants of the rows it changed when what they count from moved.
    """

    def update(self, **values: Any) -> int:
        if getattr(self.model, "workflow", None) is None:
            return super().update(**values)
        from .engine.saving import update_rows

        return update_rows(self, values, super().update)

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Any]:
        from . import engine

        objs = list(objs)
        for obj in objs:
            engine.starting(obj)
        with transaction.atomic(using=self.db):  # the rows with their log rows and effects
            created = super().bulk_create(objs, *args, **kwargs)
            engine.records_created([obj for obj in created if obj.pk is not None], using=self.db)
        return created

    def actionable_by(self, actor: Any) -> Self:
        """The records on which ``actor`` has at least one available action: one query
        when every policy and ``when`` in play has a filter form (docs: work queues)."""
        return actionable.actionable(self, actor)

    def transition(
        self,
        name: str,
        actor: Any = None,
        *,
        authorize: bool = True,
        comment: str = "",
        data: Any = None,
        **accepted: Any,
    ) -> dict[Any, Any]:
        """Move each record that allows ``name``: ``{pk: its new step, or the error}``
        (docs: bulk moves)."""
        from . import bulk

        return bulk.transition_many(
            self, name, actor, authorize=authorize, comment=comment, data=data, **accepted
        )


WorkflowManager = models.Manager.from_queryset(WorkflowQuerySet)


class WorkflowModel(models.Model, metaclass=WorkflowModelBase):
    """Subclass this and declare an inner ``class Workflow:``."""

    workflow: ClassVar[CompiledWorkflow]

    objects = WorkflowManager()

    class Meta:
        abstract = True

    def save(self, *args: Any, update_fields: Any = None, **kwargs: Any) -> None:
        """Save the record's own fields; the workflow's columns change only through the engine.

        Raises ``DirectStepChange`` (and writes nothing) when the step was assigned directly.
        """
        from . import engine

        if type(self).workflow is None:
            super().save(*args, update_fields=update_fields, **kwargs)
        elif self._state.adding or self.pk is None or kwargs.get("force_insert"):
            engine.create_record(self, super().save, args, update_fields, kwargs)
        else:
            engine.save_record(self, super().save, args, update_fields, kwargs)

    save.workflow_own = True  # type: ignore[attr-defined]  # a firing may skip it (engine)

    @classmethod
    def from_db(cls, db: Any, field_names: Any, values: Any, **kwargs: Any) -> WorkflowModel:
        instance = super().from_db(db, field_names, values, **kwargs)
        rearming.remember(instance)
        return instance

    def refresh_from_db(self, using: Any = None, fields: Any = None, **kwargs: Any) -> None:
        super().refresh_from_db(using=using, fields=fields, **kwargs)
        rearming.remember(self, fields)

    def transition(
        self,
        name: str,
        actor: Any = None,
        *,
        authorize: bool = True,
        comment: str = "",
        data: Any = None,
        **accepted: Any,
    ) -> Self:
        """Run transition ``name`` from the current step; ``comment`` and ``data`` go to
        its log row. See the docs for the errors."""
        from . import engine

        return engine.run_transition(
            self, name, actor=actor, authorize=authorize, comment=comment, data=data, **accepted
        )

    def _hold(self, what: str, *args: Any) -> Any:
        """``claim``, ``release`` or ``assign`` (generated with ``Workflow.assignment``)."""
        from .engine import claims

        return getattr(claims, what)(self, *args)

    def votes(self, name: str) -> list[Any]:
        """The actors who voted for the ``quorum`` transition ``name`` while the record has
        been in its current step (this stay), oldest vote first."""
        from .engine import votes

        return votes.voters(self, name)

    def retract(self, name: str, actor: Any, *, comment: str = "") -> WorkflowModel:
        """Withdraw ``actor``'s vote for the ``quorum`` transition ``name`` (logged)."""
        from .engine import votes

        return votes.retract(self, name, actor, comment)

    def undo(self, actor: Any = None) -> WorkflowModel:
        """Rewind the newest undoable step change (or redo an undo); see ``Undo``."""
        from . import undo

        return undo.run_undo(self, actor)

    def sla(self, name: str) -> service_levels.SlaState:
        """Where the service-level clock ``name`` of ``Workflow.slas`` stands: ``state``
        (running, paused, met, breached), ``consumed``, ``remaining`` and ``due_at``."""
        return service_levels.state(self, name)

    def pending_deadlines(self) -> list[Any]:
        """The current step's deadlines that will fire as things stand, soonest first."""
        return scheduling.pending_deadlines(self)

    def history(self) -> Any:
        """Every transition log row of this record, oldest first."""
        return history.history(self)

    def effective_history(self) -> list[Any]:
        """The log rows whose effect stands: undone rows and undo rows left out."""
        return history.effective_history(self)

    def state_at(self, instant: Any) -> str | None:
        """The step this record was in at ``instant``, from the log."""
        return history.state_at(self, instant)

    @property
    def current_step(self) -> str:
        """The name of the step this record is in."""
        return getattr(self, type(self).workflow.state_attribute)

    def available_actions(self, actor: Any = None) -> list[str]:
        """The transitions ``actor`` may call now, in declaration order."""
        from . import engine

        transitions = type(self).workflow.transitions_in(self.current_step)
        return [t.name for t in transitions if engine.permits(self, t, actor, {})]

    # Async twins: each runs its sync method in the thread Django's ORM uses for sync
    # code called from async code, so a guarded write stays one sync transaction.

    async def atransition(
        self,
        name: str,
        actor: Any = None,
        *,
        authorize: bool = True,
        comment: str = "",
        data: Any = None,
        **accepted: Any,
    ) -> Self:
        """``transition`` for async code: the same arguments, result and errors."""
        return await sync_to_async(self.transition, thread_sensitive=True)(
            name, actor, authorize=authorize, comment=comment, data=data, **accepted
        )

    async def aavailable_actions(self, actor: Any = None) -> list[str]:
        """``available_actions`` for async code."""
        return await sync_to_async(self.available_actions, thread_sensitive=True)(actor)

    async def apending_deadlines(self) -> list[Any]:
        """``pending_deadlines`` for async code."""
        return await sync_to_async(self.pending_deadlines, thread_sensitive=True)()

    async def aundo(self, actor: Any = None) -> WorkflowModel:
        """``undo`` for async code: the same result and errors."""
        return await sync_to_async(self.undo, thread_sensitive=True)(actor)
