"""A record's history, read from the transition log: the log is the source of truth."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import F

from ..model.triggers import Trigger
from ..models import TransitionLog


def history(record: Any) -> Any:
    """Every log row of ``record``, oldest first."""
    content_type = ContentType.objects.db_manager(record._state.db).get_for_model(type(record))
    rows = TransitionLog.objects.using(record._state.db or "default")
    return rows.filter(content_type=content_type, object_id=str(record.pk)).order_by(
        "occurred_at", "id"
    )


def effective_history(record: Any) -> list[Any]:
    """The rows whose effect stands: undone rows and the undo rows themselves left out.

    A redo (an undo of an undo) makes the row it restores stand again.
    """
    rows = list(history(record))
    reversed_by = {row.reverses_id: row for row in rows if row.reverses_id is not None}

    def stands(row: Any) -> bool:
        undo = reversed_by.get(row.id)
        return undo is None or not stands(undo)

    return [row for row in rows if row.triggered_by != Trigger.UNDO and stands(row)]


def state_at(record: Any, instant: datetime) -> str | None:
    """The step ``record`` was in at ``instant``; ``None`` before it was created.

    Rows in place are left out: an ``on_enter`` effect's row names the step it was
    owed to, which the record may have left before the effect ran."""
    rows = history(record).filter(occurred_at__lte=instant).exclude(to_state="")
    row = rows.exclude(from_state=F("to_state")).last()
    return None if row is None else row.to_state


def last_step_change(record: Any) -> Any:
    """The newest row that moved the record from one step to another (creation excluded)."""
    rows = history(record).exclude(triggered_by=Trigger.INITIAL)
    return next((row for row in reversed(rows) if row.from_state != row.to_state), None)
