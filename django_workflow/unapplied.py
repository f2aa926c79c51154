"""Migrations not applied yet on the databases the workflow models live on.

A worker of new code started before ``migrate`` (a rolling deploy) would read
columns that do not exist yet: it waits for them instead (``workflow_worker``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connections, router
from django.db.migrations.executor import MigrationExecutor

#: Apps whose tables the worker reads beside the workflow models' own.
READ_BY_THE_WORKER = ("django_workflow", "django_q", "contenttypes")


def unapplied(models: Iterable[Any]) -> list[str]:
    """``app_label.migration`` of each migration ``migrate`` would still apply to the
    databases ``models`` are written to, in the order it would: of the models' apps and
    those the worker reads. A database whose migrations are not recorded (a test database
    made without them) has none waiting."""
    models = list(models)
    apps = {model._meta.app_label for model in models} | set(READ_BY_THE_WORKER)
    waiting = []
    for db in sorted({router.db_for_write(model) for model in models}):
        executor = MigrationExecutor(connections[db])
        if not executor.recorder.has_table():
            continue
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        waiting += [
            f"{m.app_label}.{m.name}" for m, back in plan if not back and m.app_label in apps
        ]
    return list(dict.fromkeys(waiting))
