"""Which declaration a record runs on: its own version's (docs: versions).

A model that declares ``version`` or ``previous`` keeps every declared version
compiled; each record names its own in ``workflow_version`` and the engine reads
that version for everything it does to the record. Reading it adds no query: the
number is a column of the row.
"""

from __future__ import annotations

from typing import Any

from .columns import WORKFLOW_VERSION


def workflow_of(record: Any) -> Any:
    """The compiled declaration ``record`` runs on. A record on a version no longer
    declared reads the current one (``check --deploy`` reports such records)."""
    workflow = type(record).workflow  # a CompiledWorkflow (the work package reads it too)
    versions = workflow.versions
    if versions is None:
        return workflow
    return versions.get(getattr(record, WORKFLOW_VERSION, None), workflow)


def version_workflow(model: Any, version: int | None) -> Any:
    """The compiled declaration of ``model``'s ``version`` (the current one for ``None``
    or a number no longer declared)."""
    workflow = model.workflow
    if workflow.versions is None or version is None:
        return workflow
    return workflow.versions.get(version, workflow)


def version_filter(workflow: Any) -> dict[str, int]:
    """The lookup selecting the records of ``workflow``'s version (none without versions)."""
    return {} if workflow.versions is None else {WORKFLOW_VERSION: workflow.version}


def version_column(model: Any) -> tuple[str, ...]:
    """``("workflow_version",)`` on a model with versions, else nothing: what a read of a
    record's columns adds so that ``workflow_of`` reads no more."""
    return (WORKFLOW_VERSION,) if model.workflow.versions is not None else ()


def version_of(record: Any) -> int | None:
    """The record's version number; ``None`` on a model without versions."""
    if workflow_of(record).versions is None:
        return None
    return getattr(record, WORKFLOW_VERSION)
