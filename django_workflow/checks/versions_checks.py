"""Versions (docs: versions): the declarations kept in ``previous`` and the records on them.

Each previous version is checked by every rule as the current one is, its messages
naming the version. The deploy check reads the database: records on a version no longer
declared (E082), and a previous version no record runs on any more (I002).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core import checks
from django.db import DatabaseError, router, transaction

from ..model.compiled import CompiledWorkflow
from ..model.registry import workflow_models
from ..report import status
from .common import Messages, error, info


def check_versions(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E080: the numbers; E081: what every version must share with the current one."""
    if workflow.versions is None:
        return
    numbers = [getattr(older, "version", 1) for older in workflow.previous]
    for older, number in zip(workflow.previous, numbers, strict=True):
        if not isinstance(number, int) or number >= workflow.version or numbers.count(number) > 1:
            yield error(
                model,
                f"`Workflow.previous` holds {older.__name__} with version {number!r}: each "
                f"previous declaration needs a version of its own below the current "
                f"{workflow.version}.",
                f"Give {older.__name__} `version = <n>` with n from 1 to {workflow.version - 1}, "
                "each number once.",
                "E080",
            )
    for version in workflow.family():
        if version.state_attribute != workflow.state_attribute:
            yield error(
                model,
                f"version {version.version} stores the step in "
                f"{version.state_attribute!r}, the current one in {workflow.state_attribute!r}.",
                "Every version of a declaration keeps the step in the same field: set "
                "`state_attribute` alike in each.",
                "E081",
            )


def previous_versions(model: Any, workflow: CompiledWorkflow, rules: Iterable[Any]) -> Messages:
    """Every rule on each previous version, each message naming its version."""
    for version in workflow.family():
        if version is workflow:
            continue
        for rule in rules:
            for message in rule(model, version):
                message.msg = f"version {version.version}: {message.msg}"
                yield message


def check_deploy_versions(
    app_configs: Any = None, databases: Iterable[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E082 and I002, on ``check --deploy --database <alias>``."""
    messages: list[checks.CheckMessage] = []
    for using in databases or ():
        for model in workflow_models(app_configs):
            if model.workflow.versions is None or not router.allow_migrate_model(using, model):
                continue
            counts = records_per_version(model, using)
            if counts is not None:
                messages.extend(_version_messages(model, using, counts))
    return messages


def records_per_version(model: Any, using: str) -> dict[int, int] | None:
    """How many records of ``model`` run on each version: one query (``None`` before the
    column exists)."""
    try:
        with transaction.atomic(using=using):
            return status.records_per_version(model, using)
    except DatabaseError:  # not migrated yet
        return None


def _version_messages(model: Any, using: str, counts: dict[int, int]) -> Messages:
    declared = model.workflow.versions
    label = model._meta.label
    for number, records in counts.items():
        if number not in declared:
            yield error(
                model,
                f"{records} record{'s' * (records != 1)} in database {using!r} run on version "
                f"{number}, which the declaration no longer has.",
                f"Keep version {number} in `Workflow.previous`, or move the records first: "
                f"manage.py workflow_upgrade {label} --from {number} --to "
                f"{model.workflow.version}.",
                "E082",
            )
    for number in sorted(declared):
        if number != model.workflow.version and not counts.get(number):
            yield info(
                model,
                f"version {number} of {label} has no records in database {using!r}: it may "
                "be removed.",
                f"Delete its class from `Workflow.previous` once no deploy can still "
                f"create records on version {number}.",
                "I002",
            )
