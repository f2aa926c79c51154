"""The names of the columns a workflow generates and owns."""

from __future__ import annotations

from typing import Any

#: When the record entered its current step.
STATE_ENTERED_AT = "state_entered_at"

#: The version of the declaration a record runs on (models that declare versions).
WORKFLOW_VERSION = "workflow_version"


#: The entity name ``Step(on_enter=...)`` runs under: its work and its log rows.
ON_ENTER = "on_enter"


def on_enter_owed_by(column: str, workflow: Any) -> str | None:
    """The step whose ``on_enter`` the release-2 column ``<step>_on_enter_fired_at`` marked,
    when that step still declares one; ``None`` for any other column. Release 3 replaced
    the column by a ``PendingEffect`` row per entry (``OweUnranEffects`` carries it over)."""
    suffix = f"_{ON_ENTER}_fired_at"
    step = workflow.steps.get(column.removesuffix(suffix)) if column.endswith(suffix) else None
    return column.removesuffix(suffix) if step is not None and step.on_enter else None


def fired_column(step: str, timeout: str) -> str:
    """When an action timeout fired in the current round."""
    return f"{step}_{timeout}_fired_at"


def last_fired_column(step: str, every: Any) -> str:
    """When an every last fired (``last_fired_field`` when the user names one)."""
    return every.last_fired_field or f"{step}_{every.name}_last_fired_at"


def fired_count_column(step: str, every: Any) -> str:
    """How many times an every with ``times`` fired in the current round."""
    return f"{step}_{every.name}_fired_count"


#: When the soonest pending deadline of the current step falls due (``NULL``: none).
NEXT_DUE_AT = "next_due_at"


def sla_consumed_column(sla: str) -> str:
    """The seconds an SLA's clock ran before the record's current stay (in its own time:
    calendar, or working time for business hours)."""
    return f"sla_{sla}_consumed"


def sla_warned_column(sla: str) -> str:
    """When an SLA's warning fired (at most once per record)."""
    return f"sla_{sla}_warned_at"


def sla_breached_column(sla: str) -> str:
    """When an SLA's breach fired (at most once per record)."""
    return f"sla_{sla}_breached_at"


def sla_columns(sla: str) -> tuple[str, str, str]:
    return sla_consumed_column(sla), sla_warned_column(sla), sla_breached_column(sla)


#: Who holds the record (``Workflow.assignment = True``): a nullable key to the user model.
ASSIGNEE = "assignee"
ASSIGNEE_ID = "assignee_id"
#: When the holder took it (claimed or was assigned it).
ASSIGNED_AT = "assigned_at"
