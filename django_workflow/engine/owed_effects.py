"""The effects owed by entries into steps with ``on_enter``: written with the move.

The engine owes an effect in the move's own transaction (``owe``); an undo takes
back what the entry it reverses still owes (``cancel``). Running them is
``effects``' job; ``owed_effects_read`` reads what is owed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import router

from ..models import PendingEffect
from ..reading.owed_effects_read import pending

#: Rows written (and run) per batch.
BATCH_SIZE = 500


def owe(
    model: Any, step: str, entries: Iterable[tuple[Any, datetime]], db: str, workflow: Any = None
) -> None:
    """Owe ``step``'s ``on_enter`` (as ``workflow``, the records' version, declares it) to
    each ``(key, entry instant)``, in the caller's transaction (the move's): it commits
    with the entry or not at all."""
    declared = (workflow or model.workflow).steps.get(step)
    if declared is None or declared.on_enter is None:
        return
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    rows = owed_rows(PendingEffect, content_type, step, entries)
    PendingEffect.objects.using(db).bulk_create(rows, batch_size=BATCH_SIZE)


def owed_rows(
    effect_model: Any, content_type: Any, step: str, entries: Iterable[tuple[Any, datetime]]
) -> list[Any]:
    """The rows owing ``step``'s ``on_enter`` to each ``(key, entry instant)`` (``effect_model``
    is ``PendingEffect``, or a migration's historical one)."""
    return [
        effect_model(
            content_type=content_type,
            object_id=str(pk),
            step=step,
            entered_at=entered,
            due_at=entered,
        )
        for pk, entered in entries
    ]


def cancel(record: Any, step: str, entered_at: datetime) -> None:
    """Drop what the entry of ``record`` into ``step`` at ``entered_at`` still owes (an
    undo takes the entry back before its effect started)."""
    db = record._state.db or router.db_for_write(type(record), instance=record)
    owed = pending(type(record), db).filter(object_id=str(record.pk), step=step)
    owed.filter(entered_at=entered_at).delete()
