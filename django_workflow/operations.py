"""Migration operations that repair records left in a step the declaration no longer has.

Renaming or removing a step in a declaration leaves rows behind in a step the
workflow cannot read. ``RenameStep`` and ``MoveRecords`` put them back into a
declared step from a migration. ``OweUnranEffects`` carries over, on upgrade,
the ``on_enter`` effects a fired column still marked as not run. They work on
the historical models of the migration's state, like ``RunPython`` code
should, so an old migration keeps running after the models change; the
historical model carries no workflow, so the state column is named by
``state_attribute``.

``model`` is ``"app_label.ModelName"``, or just ``"ModelName"`` for a model of
the migration's own app.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps as global_apps
from django.core.exceptions import FieldDoesNotExist
from django.db import router, transaction
from django.db.migrations.operations.base import Operation, OperationCategory
from django.utils import timezone

from .model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from .model.triggers import Event, Trigger

# The first migration whose log accepts the `migration` trigger.
LOG_MIGRATION = ("django_workflow", "0003_attempts_survive_interruptions")

# The first migration with the table of effects owed per entry (``Step(on_enter=...)``).
EFFECTS_MIGRATION = ("django_workflow", "0010_pending_effects")

# Records moved per UPDATE and per batch of log rows: a primary key list this
# long stays under every supported backend's limit of query parameters.
CHUNK_SIZE = 500


class _RepairOperation(Operation):
    """What both repairs share: the model, its state column, the database checks."""

    reduces_to_sql = False
    # Data, not schema: always in a transaction of its own, like RunPython.
    atomic = True
    category = OperationCategory.PYTHON

    model: str
    state_attribute: str

    def state_forwards(self, app_label: str, state: Any) -> None:
        """Models keep their fields: only rows change."""

    def _model(self, apps: Any, app_label: str) -> Any:
        try:
            if "." in self.model:
                return apps.get_model(self.model)
            return apps.get_model(app_label, self.model)
        except (LookupError, ValueError) as error:
            raise ValueError(
                f"{type(self).__name__}: no model {self.model!r} in the migration's state "
                f"(app {app_label!r}). Name it as 'app_label.ModelName' and make the "
                "migration depend on a migration of that app that has the model."
            ) from error

    def _state_column(self, model: Any) -> str:
        try:
            return model._meta.get_field(self.state_attribute).name
        except FieldDoesNotExist as error:
            raise ValueError(
                f"{type(self).__name__}: {model._meta.label} has no field "
                f"{self.state_attribute!r}. Pass state_attribute= the name the model's "
                "Workflow declares as its state_attribute."
            ) from error

    def _allowed(self, alias: str, model: Any) -> bool:
        # Routers decide; unlike schema operations, unmanaged models are repaired too.
        return router.allow_migrate_model(alias, model)

    def _repaired(self, apps: Any, app_label: str, schema_editor: Any) -> tuple[Any, str] | None:
        """The historical model and the alias to repair it on; ``None`` where the routers
        keep the model off that database."""
        model = self._model(apps, app_label)
        alias = schema_editor.connection.alias
        return (model, alias) if self._allowed(alias, model) else None

    def _model_name(self) -> str:
        return self.model.rpartition(".")[2].lower()


def _require_step_names(operation: str, **names: Any) -> None:
    for argument, value in names.items():
        if not isinstance(value, str) or not value:
            raise ValueError(f"{operation}: {argument} must be a step name, got {value!r}.")


class RenameStep(_RepairOperation):
    """Rename a step in the rows: records in ``old`` are in ``new`` afterwards.

    Log rows keep the name they were written with, and ``state_entered_at``
    stays: a renamed step is the same step, so its deadlines keep counting from
    the original entry. Their due instant is computed again by the next poll
    (a worker of the new code that ran before this migration could not know
    it). Reversing renames back every record in ``new``, including any that
    were in ``new`` before.
    """

    reversible = True

    def __init__(self, model: str, old: str, new: str, state_attribute: str = "state") -> None:
        _require_step_names("RenameStep", model=model, old=old, new=new)
        if old == new:
            raise ValueError(f"RenameStep: old and new are both {old!r}; name two steps.")
        self.model = model
        self.old = old
        self.new = new
        self.state_attribute = state_attribute

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs = {"model": self.model, "old": self.old, "new": self.new}
        if self.state_attribute != "state":
            kwargs["state_attribute"] = self.state_attribute
        return type(self).__name__, [], kwargs

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        self._rename(app_label, schema_editor, to_state, self.old, self.new)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        self._rename(app_label, schema_editor, to_state, self.new, self.old)

    def _rename(self, app_label: str, schema_editor: Any, state: Any, old: str, new: str) -> None:
        repaired = self._repaired(state.apps, app_label, schema_editor)
        if repaired is None:
            return
        model, alias = repaired
        column = self._state_column(model)
        changes: dict[str, Any] = {column: new}
        if _has_field(model, NEXT_DUE_AT):  # "look at me now": the poll computes the real one
            changes[NEXT_DUE_AT] = timezone.now()
        from .engine import migrating

        rows = model._base_manager.db_manager(alias).filter(**{column: old})
        with transaction.atomic(using=alias):
            owed = _pending_effects(state.apps, schema_editor.connection)
            if owed is not None:
                content_type = MoveRecords._content_type(state.apps, model, alias)
                owed = owed.filter(content_type_id=content_type.pk)
            migrating.rename_step(rows, changes, owed, old, new)

    def describe(self) -> str:
        return f"Rename step {self.old!r} to {self.new!r} in the rows of {self.model}"

    @property
    def migration_name_fragment(self) -> str:
        return f"rename_step_{self._model_name()}_{self.old}_{self.new}"


class MoveRecords(_RepairOperation):
    """Move the records in ``from_step`` into ``to_step``, as entering it would.

    Each moved record enters ``to_step`` now: its state and ``state_entered_at``
    change, the fired columns of ``to_step``'s action timeouts (as the current
    declaration names them) are cleared, its ``on_enter`` is owed to each record
    (the migration then depends on ``EFFECTS_MIGRATION``), and, unless ``log=False``, one
    ``TransitionLog`` row per record records the move with trigger
    ``migration``. No action, signal or policy runs: the worker picks up
    automatic steps and deadlines as it finds them.

    A migration using it depends on
    ``("django_workflow", "0003_attempts_survive_interruptions")``, the first
    whose log accepts that trigger. It is not reversible: which records came
    from ``from_step`` is not kept anywhere but in the log.
    """

    reversible = False

    def __init__(
        self,
        model: str,
        from_step: str,
        to_step: str,
        state_attribute: str = "state",
        log: bool = True,
    ) -> None:
        _require_step_names("MoveRecords", model=model, from_step=from_step, to_step=to_step)
        if from_step == to_step:
            raise ValueError(
                f"MoveRecords: from_step and to_step are both {from_step!r}; name two steps."
            )
        self.model = model
        self.from_step = from_step
        self.to_step = to_step
        self.state_attribute = state_attribute
        self.log = log

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "from_step": self.from_step,
            "to_step": self.to_step,
        }
        if self.state_attribute != "state":
            kwargs["state_attribute"] = self.state_attribute
        if self.log is not True:
            kwargs["log"] = self.log
        return type(self).__name__, [], kwargs

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        repaired = self._repaired(to_state.apps, app_label, schema_editor)
        if repaired is None:
            return
        model, alias = repaired
        column = self._state_column(model)
        now = timezone.now()
        changes = {column: self.to_step, **dict.fromkeys(self._cleared_columns(model))}
        if _has_field(model, STATE_ENTERED_AT):
            changes[STATE_ENTERED_AT] = now
        if _has_field(model, NEXT_DUE_AT):  # "look at me now": the poll computes the real one
            changes[NEXT_DUE_AT] = now
        from .engine import migrating

        rows = model._base_manager.db_manager(alias).filter(**{column: self.from_step})
        with transaction.atomic(using=alias):
            # Locked until the migration commits, so every key read here is moved below.
            entered = dict(self._entered(rows.select_for_update().order_by("pk"), model))
            if not entered:  # a fresh database: nothing to move, no log or effect rows to write
                return
            migrating.move_records(
                rows,
                entered,
                changes,
                Event(self.from_step, self.to_step, "", Trigger.MIGRATION),
                now,
                log_to=self._log_target(to_state.apps, model, alias) if self.log else None,
                effects_to=self._effects_target(to_state.apps, model, alias),
                chunk_size=CHUNK_SIZE,
            )

    @staticmethod
    def _entered(rows: Any, model: Any) -> Any:
        """``(key, entry instant)`` of each row, the instant ``None`` where the historical
        model has no such column."""
        if _has_field(model, STATE_ENTERED_AT):
            return rows.values_list("pk", STATE_ENTERED_AT)
        return ((pk, None) for pk in rows.values_list("pk", flat=True))

    def _cleared_columns(self, model: Any) -> list[str]:
        """The fired columns entering ``to_step`` clears, where the historical model has them.

        Which columns those are is known only to the declaration in the code;
        a stale one left set would keep that timeout from ever firing.
        """
        try:
            workflow = getattr(global_apps.get_model(model._meta.label), "workflow", None)
        except LookupError:
            return []
        if workflow is None:
            return []
        return [name for name in workflow.fired_fields(self.to_step) if _has_field(model, name)]

    def _effects_target(self, apps: Any, model: Any, alias: str) -> tuple[Any, Any] | None:
        """Where the ``on_enter`` of ``to_step`` (as the code declares it) is owed per moved
        record: the historical ``PendingEffect`` and the content type; ``None`` without one."""
        try:
            workflow = getattr(global_apps.get_model(model._meta.label), "workflow", None)
        except LookupError:
            return None
        step = workflow.steps.get(self.to_step) if workflow is not None else None
        if step is None or step.on_enter is None:
            return None
        try:
            effect_model = apps.get_model("django_workflow", "PendingEffect")
        except LookupError:
            raise ValueError(
                f"MoveRecords into {self.to_step!r} owes its on_enter to each record: add "
                f"{EFFECTS_MIGRATION!r} to the migration's dependencies."
            ) from None
        return effect_model, self._content_type(apps, model, alias)

    @staticmethod
    def _content_type(apps: Any, model: Any, alias: str) -> Any:
        """The content type the package's rows point at: the concrete model's, as the
        engine's are, proxies included."""
        content_types = apps.get_model("contenttypes", "ContentType")
        concrete = model._meta.concrete_model._meta
        content_type, _ = content_types._base_manager.db_manager(alias).get_or_create(
            app_label=concrete.app_label, model=concrete.model_name
        )
        return content_type

    def _log_target(self, apps: Any, model: Any, alias: str) -> tuple[Any, Any]:
        """The historical log model and the content type its rows point at."""
        try:
            log_model = apps.get_model("django_workflow", "TransitionLog")
        except LookupError:
            triggers = set()
        else:
            triggers = {value for value, _ in log_model._meta.get_field("triggered_by").choices}
        if Trigger.MIGRATION not in triggers:
            raise ValueError(
                f"MoveRecords writes TransitionLog rows with trigger 'migration': add "
                f"{LOG_MIGRATION!r} to the migration's dependencies (or pass log=False)."
            )
        return log_model, self._content_type(apps, model, alias)

    def describe(self) -> str:
        return f"Move the {self.model} records in step {self.from_step!r} to {self.to_step!r}"

    @property
    def migration_name_fragment(self) -> str:
        return f"move_{self._model_name()}_{self.from_step}_to_{self.to_step}"


class OweUnranEffects(_RepairOperation):
    """Carry over the ``on_enter`` effects a release with fired columns had not run yet.

    Up to release 2, ``Step(on_enter=...)`` ran once per stay, marked done in the
    generated column ``<step>_on_enter_fired_at``; now each entry owes a ``PendingEffect``
    row. ``makemigrations`` writes this before the ``RemoveField`` of that column: each
    record in ``step`` whose column is still empty is owed its entry's effect, with the
    attempts release 2 spent on it. Needs ``EFFECTS_MIGRATION``; not reversible."""

    reversible = False

    def __init__(self, model: str, step: str, state_attribute: str = "state") -> None:
        _require_step_names("OweUnranEffects", model=model, step=step)
        self.model = model
        self.step = step
        self.state_attribute = state_attribute

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {"model": self.model, "step": self.step}
        if self.state_attribute != "state":
            kwargs["state_attribute"] = self.state_attribute
        return type(self).__name__, [], kwargs

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        repaired = self._repaired(from_state.apps, app_label, schema_editor)
        if repaired is None:
            return
        model, alias = repaired
        fired = f"{self.step}_on_enter_fired_at"
        if not _has_field(model, fired):
            raise ValueError(
                f"OweUnranEffects: {model._meta.label} has no field {fired!r} in the "
                "migration's state. Put the operation before the RemoveField of that column."
            )
        try:
            effect_model = to_state.apps.get_model("django_workflow", "PendingEffect")
        except LookupError:
            raise ValueError(
                f"OweUnranEffects needs the table of effects: add {EFFECTS_MIGRATION!r} "
                "to the migration's dependencies."
            ) from None
        from .engine import migrating

        content_type = MoveRecords._content_type(from_state.apps, model, alias)
        column = self._state_column(model)
        unran = model._base_manager.db_manager(alias).filter(
            **{column: self.step, f"{fired}__isnull": True}
        )
        entries = list(unran.values_list("pk", STATE_ENTERED_AT))
        spent = from_state.apps.get_model("django_workflow", "WorkAttempt")  # release 2's
        migrating.owe((effect_model, content_type), self.step, entries, alias, spent)

    def describe(self) -> str:
        return f"Owe the unran on_enter of {self.model} records in step {self.step!r}"

    @property
    def migration_name_fragment(self) -> str:
        return f"owe_{self._model_name()}_{self.step}_effects"


def _has_field(model: Any, name: str) -> bool:
    try:
        model._meta.get_field(name)
    except FieldDoesNotExist:
        return False
    return True


def _pending_effects(apps: Any, connection: Any) -> Any:
    """The rows of ``PendingEffect`` on ``connection``: the migration's historical model,
    or the installed one where the table exists but the migration does not depend on its
    migration; ``None`` before the table exists."""
    try:
        model = apps.get_model("django_workflow", "PendingEffect")
    except LookupError:
        model = global_apps.get_model("django_workflow", "PendingEffect")
        if model._meta.db_table not in connection.introspection.table_names():
            return None
    return model._base_manager.db_manager(connection.alias)
