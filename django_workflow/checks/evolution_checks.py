"""What a deploy would leave behind in the database (E076 to E078), for ``check --deploy``.

Run with a database (``manage.py check --deploy --database default``), these
errors stop a deploy pipeline where the rows, once the migrations waiting to be
applied have run, would hold what the new declaration cannot read: records in a
step it no longer has (E076, the error twin of W010), or the marks of a removed
action timeout (E077) or every (E078) in a column no migration drops or renames, or
release 2's ``<step>_on_enter_fired_at`` dropped with effects no migration carries over
(E079).
They read the database only when Django passes databases, so a plain ``check
--deploy`` never queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core import checks
from django.db import DatabaseError, connections, router
from django.db.migrations import operations as schema
from django.db.migrations.executor import MigrationExecutor

from ..model.columns import on_enter_owed_by
from ..model.registry import workflow_models
from ..operations import MoveRecords, OweUnranEffects, RenameStep
from .common import error
from .records_checks import undeclared_steps

#: The suffixes of the columns the package generates for deadlines (``columns.py``).
TIMEOUT_FIRED = "_fired_at"
EVERY_LAST_FIRED = "_last_fired_at"


def check_deploy_records(
    app_configs: Any = None, databases: Iterable[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    for using in databases or ():
        models = [m for m in workflow_models(app_configs) if router.allow_migrate_model(using, m)]
        if not models:
            continue
        waiting = Waiting.read(using)
        for model in models:
            messages.extend(_stranded_records(model, using, waiting))
            messages.extend(_stray_marks(model, using, waiting))
    return messages


@dataclass
class Waiting:
    """What the migrations not yet applied on a database will do to workflow rows."""

    repaired: set[tuple[str, str]] = field(default_factory=set)  # (model label, step)
    dropped: set[tuple[str, str, str]] = field(default_factory=set)  # (app, model, column)
    added: set[tuple[str, str, str]] = field(default_factory=set)
    renamed: set[tuple[str, str, str]] = field(default_factory=set)  # the old names
    owed: set[tuple[str, str]] = field(default_factory=set)  # (model label, step)
    steps_renamed: dict[tuple[str, str], str] = field(default_factory=dict)  # -> new name

    @classmethod
    def read(cls, using: str) -> Waiting:
        waiting = cls()
        for migration in waiting_migrations(using) or ():
            for operation in migration.operations:
                waiting.note(migration.app_label, operation)
        return waiting

    def note(self, app_label: str, operation: Any) -> None:
        if isinstance(operation, RenameStep | MoveRecords | OweUnranEffects):
            label = operation.model if "." in operation.model else f"{app_label}.{operation.model}"
            if isinstance(operation, OweUnranEffects):
                self.owed.add((label.lower(), operation.step))
                return
            step = operation.old if isinstance(operation, RenameStep) else operation.from_step
            self.repaired.add((label.lower(), step))
            if isinstance(operation, RenameStep):
                self.steps_renamed[label.lower(), operation.old] = operation.new
        elif isinstance(operation, schema.RemoveField):
            self.dropped.add((app_label, operation.model_name_lower, operation.name))
        elif isinstance(operation, schema.RenameField):
            self.renamed.add((app_label, operation.model_name_lower, operation.old_name))
        elif isinstance(operation, schema.AddField):
            self.added.add((app_label, operation.model_name_lower, operation.name))


def waiting_migrations(using: str) -> list[Any] | None:
    """The migrations ``migrate`` would apply to database ``using``, in its order; ``None``
    where no migration is recorded (no migration table: a database made without them)."""
    try:
        executor = MigrationExecutor(connections[using])
        if not executor.recorder.has_table():
            return None
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError:
        return None
    return [migration for migration, backwards in plan if not backwards]


def _stranded_records(model: Any, using: str, waiting: Waiting) -> list[checks.CheckMessage]:
    """E076: records in steps the declaration lacks that no waiting migration repairs."""
    label = model._meta.label_lower
    counts = {
        step: records
        for step, records in undeclared_steps(model, using).items()
        if (label, step) not in waiting.repaired
    }
    if not counts:
        return []
    listed = ", ".join(f"{step!r} ({records})" for step, records in counts.items())
    state = model.workflow.state_attribute
    tail = f", state_attribute={state!r}" if state != "state" else ""
    arguments = f"{model._meta.label!r}, {next(iter(counts))!r}"
    return [
        error(
            model,
            f"records in database {using!r} are in steps the declaration no longer has, and "
            f"no migration waiting to be applied repairs them: {listed}. The worker skips "
            "them (no action, deadline or automatic step runs) and the admin offers them "
            "no transition.",
            "Declare the step again, or write a migration with "
            f"django_workflow.operations.RenameStep({arguments}, new{tail}) (a renamed step) "
            f"or MoveRecords({arguments}, to_step{tail}) (a removed one), then migrate.",
            "E076",
        )
    ]


def _stray_marks(model: Any, using: str, waiting: Waiting) -> list[checks.CheckMessage]:
    """E077 and E078: a removed deadline's column that still holds marks and that the
    waiting migrations leave in place, or drop while adding one in the same step (a
    rename written as a removal and an addition loses the marks)."""
    meta = model._meta
    key = (meta.app_label, meta.model_name)
    declared = {f.column for f in meta.local_concrete_fields}
    messages = []
    for column in _table_columns(meta.db_table, using):
        if column in declared or not column.endswith(TIMEOUT_FIRED):
            continue
        if (*key, column) in waiting.renamed:
            continue  # its marks go on under the new name
        owed_by = on_enter_owed_by(column, model.workflow)
        if owed_by is not None:
            messages.extend(_unowed_effects(model, using, column, owed_by, waiting))
            continue
        every = column.endswith(EVERY_LAST_FIRED)
        suffix = EVERY_LAST_FIRED if every else TIMEOUT_FIRED
        step = _step_of(column, model.workflow.steps)
        if (*key, column) in waiting.dropped:
            # A renamed step's column dropped and added under the new step's name: the
            # same loss as a renamed timeout's.
            beside = step or _renamed_step(meta.label_lower, column, waiting)
            renamed_as = _added_beside(key, beside, suffix, column, waiting)
            if renamed_as is None:
                continue  # removed for good by the migration: its marks go with it
        else:
            renamed_as = None
        marks = _marks(meta.db_table, column, using)
        if not marks:
            continue
        describe = _removed_every if every else _removed_timeout
        messages.append(describe(model, using, column, step, marks, renamed_as))
    return messages


def _unowed_effects(
    model: Any, using: str, column: str, step: str, waiting: Waiting
) -> list[checks.CheckMessage]:
    """E079: release 2's ``on_enter`` column of ``step``, empty for records still owed the
    effect, that no waiting ``OweUnranEffects`` carries over to ``PendingEffect`` rows."""
    label = model._meta.label
    if (label.lower(), step) in waiting.owed:
        return []
    meta, quote = model._meta, connections[using].ops.quote_name
    state = meta.get_field(model.workflow.state_attribute).column
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM {quote(meta.db_table)} "
            f"WHERE {quote(state)} = %s AND {quote(column)} IS NULL",
            [step],
        )
        owed = int(cursor.fetchone()[0])
    if not owed:
        return []
    return [
        error(
            model,
            f"column {column!r} is where release 2 marked {step}.on_enter as run: {owed} "
            f"records in step {step!r} of database {using!r} have not run it, and no "
            "migration waiting to be applied carries them over: without it their effects "
            "never run.",
            f"Run makemigrations with this release: it writes "
            f"django_workflow.operations.OweUnranEffects({label!r}, {step!r}) before the "
            "RemoveField of the column. Then migrate.",
            "E079",
        )
    ]


def _removed_timeout(
    model: Any, using: str, column: str, step: str | None, marks: int, renamed_as: str | None
) -> checks.Error:
    return error(
        model,
        f"column {column!r} of a removed action timeout {_in(step)} still holds when it "
        f"fired for {marks} records in database {using!r}, and {_fate(renamed_as)}: a "
        "timeout renamed this way fires again for those records.",
        f"If the timeout was renamed, rename its column in the migration "
        f"(migrations.RenameField({model._meta.model_name!r}, {column!r}, <new column>) "
        "instead of its RemoveField and AddField: makemigrations does not offer it as a "
        "rename, the help text names the timeout); if it is removed for good, let "
        "makemigrations remove the column. Then migrate.",
        "E077",
    )


def _removed_every(
    model: Any, using: str, column: str, step: str | None, marks: int, renamed_as: str | None
) -> checks.Error:
    return error(
        model,
        f"an every {_in(step)} is no longer declared: it stops repeating for the records in "
        f"that step. Its column {column!r} still holds when it last fired for {marks} records "
        f"in database {using!r}, and {_fate(renamed_as)}: an every renamed this way forgets "
        "its last firing and its count, and fires again from the records' entry.",
        f"If the every was renamed, rename its columns in the migration "
        f"(migrations.RenameField({model._meta.model_name!r}, {column!r}, <new column>), and "
        "its _fired_count column with `times`); if it is removed for good, let "
        "makemigrations remove its columns. Then migrate and restart the workers.",
        "E078",
    )


def _fate(renamed_as: str | None) -> str:
    if renamed_as is None:
        return "no migration waiting to be applied removes or renames the column"
    return f"the migration waiting to be applied removes it and adds {renamed_as!r}"


def _in(step: str | None) -> str:
    return f"of step {step!r}" if step else "of a removed step"


def _step_of(column: str, steps: Iterable[str]) -> str | None:
    """The declared step a generated column belongs to: the longest name it starts with."""
    owners = [step for step in steps if column.startswith(f"{step}_")]
    return max(owners, key=len, default=None)


def _renamed_step(label: str, column: str, waiting: Waiting) -> str | None:
    """The new name a waiting ``RenameStep`` gives the step ``column`` belongs to."""
    owners = [(old, new) for (model, old), new in waiting.steps_renamed.items() if model == label]
    found = [(old, new) for old, new in owners if column.startswith(f"{old}_")]
    return max(found, key=lambda pair: len(pair[0]))[1] if found else None


def _added_beside(
    key: tuple[str, str], step: str | None, suffix: str, dropped: str, waiting: Waiting
) -> str | None:
    """A column of the same kind in the same step that the waiting migrations add."""
    if step is None:
        return None
    for app_label, model_name, name in sorted(waiting.added):
        kind = EVERY_LAST_FIRED if name.endswith(EVERY_LAST_FIRED) else TIMEOUT_FIRED
        beside = (app_label, model_name) == key and name.startswith(f"{step}_")
        if beside and name.endswith(kind) and kind == suffix and name != dropped:
            return name
    return None


def _table_columns(table: str, using: str) -> list[str]:
    connection = connections[using]
    try:
        with connection.cursor() as cursor:
            if table not in connection.introspection.table_names(cursor):
                return []
            return [c.name for c in connection.introspection.get_table_description(cursor, table)]
    except DatabaseError:
        return []


def _marks(table: str, column: str, using: str) -> int:
    connection = connections[using]
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {quote(table)} WHERE {quote(column)} IS NOT NULL")
        return int(cursor.fetchone()[0])
