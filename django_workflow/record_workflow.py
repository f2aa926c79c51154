"""``record.workflow``: every call the library offers on a record, under one name.

On the class, ``Model.workflow`` is the compiled declaration. On a record it is
a ``RecordWorkflow``: the library's calls for that record (``transition``,
``retract``, ``history``, ``claim``, ...) and, for any other name, the
declaration's attribute (``record.workflow.steps``). A transition may take any
name, ``retract`` or ``history`` included: the model's method of that name is
then the transition's, and the library's call stays reachable here.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, overload

from asgiref.sync import sync_to_async
from django.db import models

from .model.columns import WORKFLOW_VERSION
from .model.generation import is_generated

if TYPE_CHECKING:
    from .model.compiled import CompiledWorkflow
    from .work.sla_clocks_read import SlaState


class WorkflowAttribute:
    """``Model.workflow``: the compiled declaration on the class (``None`` without one), a
    ``RecordWorkflow`` on a record. The metaclass stores each class's declaration."""

    @overload
    def __get__(self, record: None, owner: Any = None) -> CompiledWorkflow: ...

    @overload
    def __get__(self, record: models.Model, owner: Any = None) -> RecordWorkflow: ...

    def __get__(self, record: Any, owner: Any = None) -> Any:
        compiled = getattr(owner if owner is not None else type(record), "_workflow_compiled", None)
        if record is None or compiled is None:
            return compiled
        if compiled.versions is not None:  # the record's own version
            compiled = compiled.versions.get(getattr(record, WORKFLOW_VERSION, None), compiled)
        return RecordWorkflow(record, compiled)


class RecordWorkflow:
    """The library's calls on one record (see the module)."""

    __slots__ = ("declaration", "record")

    def __init__(self, record: Any, declaration: CompiledWorkflow) -> None:
        self.record = record
        self.declaration = declaration

    def __getattr__(self, name: str) -> Any:
        return getattr(self.declaration, name)

    def __repr__(self) -> str:
        return f"<RecordWorkflow of {self.record._meta.label} pk={self.record.pk!r}>"

    @property
    def current_step(self) -> str:
        """The name of the step this record is in."""
        return getattr(self.record, self.declaration.state_attribute)

    def transition(
        self,
        name: str,
        actor: Any = None,
        *,
        authorize: bool = True,
        comment: str = "",
        data: Any = None,
        **accepted: Any,
    ) -> Any:
        """Run transition ``name`` from the current step; ``comment`` and ``data`` go to
        its log row (docs: transitions). A model overriding ``transition`` is called
        through its override."""
        if _looks_up(self.declaration, name, actor, authorize, comment, data, accepted):
            warnings.warn(
                "record.workflow.transition(step, name) looks a declared transition up only "
                "until release 5: use type(record).workflow.transition(step, name).",
                DeprecationWarning,
                stacklevel=2,
            )
            return self.declaration.transition(name, actor)
        if not is_generated(type(self.record).transition):  # the project's own override
            return self.record.transition(
                name, actor, authorize=authorize, comment=comment, data=data, **accepted
            )
        from . import engine

        return engine.run_transition(
            self.record,
            name,
            actor=actor,
            authorize=authorize,
            comment=comment,
            data=data,
            **accepted,
        )

    def available_actions(self, actor: Any = None) -> list[str]:
        """The transitions ``actor`` may call now, in declaration order."""
        from . import engine

        transitions = self.declaration.transitions_in(self.current_step)
        return [t.name for t in transitions if engine.permits(self.record, t, actor, {})]

    def upgrade(self, to: int, *, steps: dict[str, str] | None = None, actor: Any = None) -> Any:
        """Move the record to version ``to`` of its declaration: locked, logged (trigger
        ``upgrade``), its deadlines recomputed from its unchanged entry instant. A step
        ``to`` lacks must be mapped in ``steps`` (``UnmappedSteps`` otherwise; docs:
        versions). Returns the record, read again."""
        from .engine import upgrading

        return upgrading.upgrade_record(self.record, to, steps, actor)

    @property
    def version(self) -> int | None:
        """The version of the declaration the record runs on (``None`` without versions)."""
        if self.declaration.versions is None:
            return None
        return getattr(self.record, WORKFLOW_VERSION)  # type: ignore[no-any-return]

    def claim(self, actor: Any, *, comment: str = "") -> Any:
        """Become the record's holder: ``AlreadyClaimed`` when someone holds it; of
        concurrent claims exactly one wins (docs: who holds the work)."""
        from .engine import claims

        return claims.claim(self.record, actor, comment)

    def release(self, actor: Any, *, comment: str = "") -> Any:
        """Let go of the record: its holder, a stand-in, or whom the ``assign`` policy
        allows."""
        from .engine import claims

        return claims.release(self.record, actor, comment)

    def assign(
        self, user: Any, *, actor: Any = None, authorize: bool = True, comment: str = ""
    ) -> Any:
        """Make ``user`` the holder (``None``: nobody); needs the ``assign`` policy."""
        from .engine import claims

        return claims.assign(self.record, user, actor, authorize, comment)

    def votes(self, name: str) -> list[Any]:
        """The actors who voted for the ``quorum`` transition ``name`` while the record
        has been in its current step (this stay), oldest vote first."""
        from .engine import votes

        return votes.voters(self.record, name)

    def retract(self, name: str, actor: Any, *, comment: str = "") -> Any:
        """Withdraw ``actor``'s vote for the ``quorum`` transition ``name`` (logged)."""
        from .engine import votes

        return votes.retract(self.record, name, actor, comment)

    def undo(self, actor: Any = None) -> Any:
        """Rewind the newest undoable step change (or redo an undo); see ``Undo``."""
        from .engine import undo

        return undo.run_undo(self.record, actor)

    def sla(self, name: str) -> SlaState:
        """Where the service-level clock ``name`` of ``Workflow.slas`` stands."""
        from .work import sla_clocks_read

        return sla_clocks_read.state(self.record, name)

    def pending_deadlines(self) -> list[Any]:
        """The current step's deadlines that will fire as things stand, soonest first."""
        from . import scheduling

        return scheduling.pending_deadlines(self.record)

    def history(self) -> Any:
        """Every transition log row of this record, oldest first."""
        from .reading import log_rows_read

        return log_rows_read.history(self.record)

    def effective_history(self) -> list[Any]:
        """The log rows whose effect stands: undone rows and undo rows left out."""
        from .reading import log_rows_read

        return log_rows_read.effective_history(self.record)

    def state_at(self, instant: Any) -> str | None:
        """The step this record was in at ``instant``, from the log."""
        from .reading import log_rows_read

        return log_rows_read.state_at(self.record, instant)

    # Async twins: each runs its sync call in the thread Django's ORM uses for sync
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
    ) -> Any:
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

    async def aundo(self, actor: Any = None) -> Any:
        """``undo`` for async code: the same result and errors."""
        return await sync_to_async(self.undo, thread_sensitive=True)(actor)


def _looks_up(declaration: Any, first: Any, second: Any, *rest: Any) -> bool:
    """Whether ``transition(first, second)`` is the declaration's lookup of transition
    ``second`` of step ``first`` that ``record.workflow`` answered before release 4."""
    authorize, comment, data, accepted = rest
    called_plainly = authorize is True and comment == "" and data is None and not accepted
    return (
        called_plainly
        and isinstance(first, str)
        and isinstance(second, str)
        and first in declaration.steps
        and first not in declaration.transition_names
        and second in declaration.transition_names
    )


#: The calls that change data: Django's templates never call them (``alters_data``).
CHANGING = ("transition", "atransition", "claim", "release", "assign", "retract", "undo", "aundo")
for _name in CHANGING:
    getattr(RecordWorkflow, _name).alters_data = True

#: The record-level calls a model also offers under its own name, unless a transition
#: (or the user) takes that name.
SHORTCUTS = (
    "transition",
    "available_actions",
    "votes",
    "retract",
    "undo",
    "sla",
    "pending_deadlines",
    "history",
    "effective_history",
    "state_at",
    "atransition",
    "aavailable_actions",
    "apending_deadlines",
    "aundo",
)
