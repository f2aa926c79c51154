"""Records in the database: rows left in a step the declaration no longer has (W010).

A database check: Django passes it the databases to read on ``manage.py check
--database <alias>``, ``migrate`` and ``test``, and none on a plain ``check``,
which therefore never queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core import checks
from django.db import DatabaseError, router, transaction
from django.db.models import Count, Q

from ..model.registry import workflow_models
from ..model.versions import version_filter
from .common import warning


def check_records(
    app_configs: Any = None, databases: Iterable[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    for using in databases or ():
        for model in workflow_models(app_configs):
            counts = undeclared_steps(model, using)
            if counts:
                messages.append(_undeclared_steps_warning(model, using, counts))
    return messages


def undeclared_steps(model: Any, using: str) -> dict[str, int]:
    """How many records of ``model`` sit in each step its declaration lacks: one query."""
    if not router.allow_migrate_model(using, model):
        return {}
    state = model.workflow.state_attribute
    declared = Q()
    for version in model.workflow.family():  # each version's records, its own steps
        declared |= Q(**{f"{state}__in": list(version.steps), **version_filter(version)})
    rows = (
        model._base_manager.using(using)
        .exclude(declared)
        .values_list(state)
        .annotate(records=Count("pk"))
        .order_by(state)
    )
    try:
        with transaction.atomic(using=using):  # a savepoint, so a failure leaves no trace
            return dict(rows)
    except DatabaseError:
        # The table or the state column does not exist yet: `migrate` runs the
        # checks before it creates them, and such a table holds no stray rows.
        return {}


def _undeclared_steps_warning(model: Any, using: str, counts: dict[str, int]) -> checks.Warning:
    listed = ", ".join(f"{step!r} ({records})" for step, records in counts.items())
    state = model.workflow.state_attribute
    tail = f", state_attribute={state!r}" if state != "state" else ""
    arguments = f"{model._meta.label!r}, {next(iter(counts))!r}"
    return warning(
        model,
        f"records in database {using!r} are in steps the declaration no longer has: {listed}.",
        "Declare the step again, or repair the records in a migration with "
        f"django_workflow.operations.RenameStep({arguments}, new{tail}) or "
        f"MoveRecords({arguments}, to_step{tail}).",
        "W010",
    )
