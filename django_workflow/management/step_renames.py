"""``makemigrations`` asks whether a step was renamed, as Django asks about fields, and
carries over what a column the package generated and later replaced held.

When a step disappears from a workflow's declaration and another appears on the
same model, the state field's ``choices`` change and Django writes an
``AlterField``: the records in the old step would be left in a step the
declaration no longer has. The autodetector below asks, for each such pair,
"Was step 'x' renamed to 'y'? [y/N]" and, on yes, writes ``RenameStep`` before
the field change. ``manage.py makemigrations`` uses it through the package's
own ``makemigrations`` command (``management/commands/makemigrations.py``).

Release 2 marked a step's ``on_enter`` as run in ``<step>_on_enter_fired_at``;
release 3 owes each entry a ``PendingEffect`` row instead. Where a migration
removes that column from a step that still declares ``on_enter``, the
autodetector writes ``OweUnranEffects`` before the ``RemoveField``, so the
effects not yet run (and the attempts they spent) survive the upgrade.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.db.migrations.autodetector import MigrationAutodetector, OperationDependency
from django.db.migrations.questioner import InteractiveMigrationQuestioner

from ..model.columns import on_enter_owed_by
from ..model.registry import is_workflow_model
from ..operations import OweUnranEffects, RenameStep


class WorkflowAutodetector(MigrationAutodetector):
    """Django's autodetector, plus ``RenameStep`` for the steps the questioner says
    were renamed."""

    def create_renamed_fields(self) -> None:
        # Steps are asked about after fields (the state field may itself be renamed), and
        # before Django writes the fields' renames: a renamed step's deadline columns
        # are renamed with it, keeping when each deadline fired.
        super().create_renamed_fields()
        self.step_renames = self._asked_step_renames()
        self.create_renamed_deadline_columns()

    def generate_altered_fields(self) -> None:
        # Before the AlterField of the state field's choices, in the same migration.
        self.generate_renamed_steps()
        super().generate_altered_fields()

    def create_renamed_deadline_columns(self) -> None:
        """A ``RenameField`` for each deadline column of a renamed step (its fired,
        last-fired and count columns: ``<step>_<name>_...``), not the ``RemoveField`` and
        ``AddField`` Django writes (the help text names the step, so it offers no rename):
        dropped, every reminder that fired would fire again."""
        removed = self.old_field_keys - self.new_field_keys
        added = self.new_field_keys - self.old_field_keys
        for app_label, model_name, old, new, _model_state, _state in self.step_renames:
            model_state = self.to_state.models[app_label, model_name]
            for key in sorted(removed):
                column = key[2]
                renamed = new + column.removeprefix(old)
                if key[:2] != (app_label, model_name) or not column.startswith(f"{old}_"):
                    continue
                if not column.endswith(DEADLINE_COLUMN_ENDINGS):
                    continue
                if (app_label, model_name, renamed) not in added:
                    continue
                field = model_state.get_field(renamed)
                self.renamed_operations.append(
                    (app_label, model_name, None, column, app_label, model_name, field, renamed)
                )
                self.renamed_fields[app_label, model_name, renamed] = column

    def generate_removed_fields(self) -> None:
        # Before the RemoveField of the column, in the same migration.
        self.generate_owed_effects()
        super().generate_removed_fields()

    def generate_owed_effects(self) -> None:
        """``OweUnranEffects`` for each release-2 ``on_enter`` column being removed."""
        after_effects_table = OperationDependency(
            "django_workflow", "pendingeffect", None, OperationDependency.Type.CREATE
        )
        for app_label, model_name, column in sorted(self.old_field_keys - self.new_field_keys):
            workflow = _workflow(app_label, model_name)
            step = on_enter_owed_by(column, workflow) if workflow is not None else None
            if step is None:
                continue
            name = self.to_state.models[app_label, model_name].name
            state = workflow.state_attribute
            operation = OweUnranEffects(f"{app_label}.{name}", step, state)
            self.add_operation(app_label, operation, dependencies=[after_effects_table])

    def _asked_step_renames(self) -> list[tuple[str, str, str, str, Any, str]]:
        """``(app label, model name, old, new, model state, state attribute)`` of each step
        the questioner says was renamed."""
        renames = []
        for app_label, model_name in sorted(self.kept_model_keys):
            if self.questioner.specified_apps and app_label not in self.questioner.specified_apps:
                continue
            for rename in self._step_renames(app_label, model_name):
                renames.append((app_label, model_name, *rename))
        return renames

    def generate_renamed_steps(self) -> None:
        for app_label, _model_name, old, new, model_state, state in self.step_renames:
            self.add_operation(app_label, RenameStep(model_state.name, old, new, state))

    def _step_renames(self, app_label: str, model_name: str) -> list[tuple[str, str, Any, str]]:
        """``(old, new, model state, state attribute)`` of each step the questioner says
        was renamed: each removed step is offered the added ones in turn, as Django
        offers fields."""
        workflow = _workflow(app_label, model_name)
        if workflow is None:
            return []
        state = workflow.state_attribute
        old_state = self.from_state.models[
            app_label, self.renamed_models.get((app_label, model_name), model_name)
        ]
        new_state = self.to_state.models[app_label, model_name]
        old_field = self.renamed_fields.get((app_label, model_name, state), state)
        if old_field not in old_state.fields or state not in new_state.fields:
            return []
        old_steps = _steps(old_state.fields[old_field])
        new_steps = _steps(new_state.fields[state])
        removed = [step for step in old_steps if step not in new_steps]
        added = [step for step in new_steps if step not in old_steps]
        renames = []
        for old in removed:
            for new in added:
                if ask_step_renamed(self.questioner, new_state.name, old, new):
                    renames.append((old, new, new_state, state))
                    added.remove(new)
                    break
        return renames


#: How the deadline columns of a step end (``columns.py``): fired, last fired, count.
DEADLINE_COLUMN_ENDINGS = ("_fired_at", "_last_fired_at", "_fired_count")


def ask_step_renamed(questioner: Any, model: str, old: str, new: str) -> bool:
    """The answer to "Was step 'old' renamed to 'new'?": asked on a terminal; without
    one (``--noinput``), no, and the command's output says so."""
    if isinstance(questioner, InteractiveMigrationQuestioner):
        return bool(questioner._boolean_input(f"Was step {old!r} renamed to {new!r}? [y/N]", False))
    log = getattr(questioner, "log", None)
    if log is not None and getattr(questioner, "verbosity", 1) > 0:
        log(
            f"Step {old!r} of {model} disappeared and {new!r} appeared: assumed not renamed "
            f"(--noinput). If it was renamed, add RenameStep({model!r}, {old!r}, {new!r}) to "
            "the migration before the AlterField, or run makemigrations without --noinput."
        )
    return False


def _workflow(app_label: str, model_name: str) -> Any:
    try:
        model = apps.get_model(app_label, model_name)
    except LookupError:
        return None
    return model.workflow if is_workflow_model(model) else None


def _steps(field: Any) -> list[str]:
    return [str(value) for value, _label in getattr(field, "choices", None) or ()]
