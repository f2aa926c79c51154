"""``WorkflowModel``: the class users subclass, its manager and its queryset.

A facade: each method hands over to the engine, the history or the
scheduling module. The engine (and bulk moves and undo, built on it) is
imported by the methods that run it, so loading the models (as ``manage.py
check`` does) loads no runtime. The workflow's own columns (the step, the entry instant,
the fired columns) are the engine's: ``save()`` of an existing record leaves
them alone.
"""

from __future__ import annotations

from typing import Any, Self, TypeVar

from django.db import models, transaction

from .model.generation import WorkflowModelBase, replaceable, replaceable_property
from .model.registry import (
    workflow_models as workflow_models,  # where it lived before
)
from .reading import actionable
from .record_workflow import WorkflowAttribute
from .work import rearming, sla_clocks_read

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
        from .engine import bulk

        return bulk.transition_many(
            self, name, actor, authorize=authorize, comment=comment, data=data, **accepted
        )


WorkflowManager = models.Manager.from_queryset(WorkflowQuerySet)


class WorkflowModel(models.Model, metaclass=WorkflowModelBase):
    """Subclass this and declare an inner ``class Workflow:``."""

    #: The compiled declaration on the class; on a record, ``RecordWorkflow``.
    workflow = WorkflowAttribute()

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

    # The library's calls on a record live in ``record.workflow`` (``RecordWorkflow``);
    # each below is a shortcut to one of them. A transition of the same name takes the
    # shortcut's place on its model (``replaceable``); ``record.workflow.<name>`` stays.

    @replaceable
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
        """``record.workflow.transition``: run transition ``name`` from the current step."""
        from . import engine

        return engine.run_transition(  # type: ignore[no-any-return]
            self, name, actor=actor, authorize=authorize, comment=comment, data=data, **accepted
        )

    @replaceable
    def votes(self, name: str) -> list[Any]:
        """``record.workflow.votes``: who voted for the ``quorum`` transition ``name``."""
        return self.workflow.votes(name)

    @replaceable
    def retract(self, name: str, actor: Any, *, comment: str = "") -> WorkflowModel:
        """``record.workflow.retract``: withdraw ``actor``'s vote for ``name``."""
        return self.workflow.retract(name, actor, comment=comment)  # type: ignore[no-any-return]

    @replaceable
    def undo(self, actor: Any = None) -> WorkflowModel:
        """``record.workflow.undo``: rewind the newest undoable step change."""
        return self.workflow.undo(actor)  # type: ignore[no-any-return]

    @replaceable
    def sla(self, name: str) -> sla_clocks_read.SlaState:
        """``record.workflow.sla``: where the service-level clock ``name`` stands."""
        return self.workflow.sla(name)

    @replaceable
    def pending_deadlines(self) -> list[Any]:
        """``record.workflow.pending_deadlines``: the current step's coming deadlines."""
        return self.workflow.pending_deadlines()

    @replaceable
    def history(self) -> Any:
        """``record.workflow.history``: every log row of this record, oldest first."""
        return self.workflow.history()

    @replaceable
    def effective_history(self) -> list[Any]:
        """``record.workflow.effective_history``: the log rows whose effect stands."""
        return self.workflow.effective_history()

    @replaceable
    def state_at(self, instant: Any) -> str | None:
        """``record.workflow.state_at``: the step this record was in at ``instant``."""
        return self.workflow.state_at(instant)

    @replaceable_property
    def current_step(self) -> str:
        """The name of the step this record is in."""
        return getattr(self, type(self).workflow.state_attribute)

    @replaceable
    def available_actions(self, actor: Any = None) -> list[str]:
        """``record.workflow.available_actions``: the transitions ``actor`` may call now."""
        return self.workflow.available_actions(actor)

    @replaceable
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
        """``record.workflow.atransition``: ``transition`` for async code."""
        return await self.workflow.atransition(  # type: ignore[no-any-return]
            name, actor, authorize=authorize, comment=comment, data=data, **accepted
        )

    @replaceable
    async def aavailable_actions(self, actor: Any = None) -> list[str]:
        """``record.workflow.aavailable_actions``: ``available_actions`` for async code."""
        return await self.workflow.aavailable_actions(actor)

    @replaceable
    async def apending_deadlines(self) -> list[Any]:
        """``record.workflow.apending_deadlines``: ``pending_deadlines`` for async code."""
        return await self.workflow.apending_deadlines()

    @replaceable
    async def aundo(self, actor: Any = None) -> WorkflowModel:
        """``record.workflow.aundo``: ``undo`` for async code."""
        return await self.workflow.aundo(actor)  # type: ignore[no-any-return]


for _name in ("transition", "atransition", "retract", "undo", "aundo"):
    getattr(WorkflowModel, _name).alters_data = True  # templates never call them
