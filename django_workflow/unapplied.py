"""Migrations not applied yet on the databases the workflow models live on.

A worker of new code started before ``migrate`` (a rolling deploy) would read
columns that do not exist yet: it waits for them instead (``workflow_worker``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connections, router
from django.db.migrations.executor import MigrationExecutor


def unapplied(models: Iterable[Any]) -> list[str]:
    """``app_label.migration`` of each migration ``migrate`` would still apply to the
    databases ``models`` are written to, in the order it would."""
    waiting = []
    for db in sorted({router.db_for_write(model) for model in models}):
        executor = MigrationExecutor(connections[db])
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        waiting += [f"{m.app_label}.{m.name}" for m, backwards in plan if not backwards]
    return list(dict.fromkeys(waiting))
