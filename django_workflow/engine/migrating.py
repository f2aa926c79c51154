"""The repairs a migration runs (``operations``), written as the engine writes a move.

They work on the historical models of the migration's state, which carry no
workflow: no signal is sent and no action or policy runs. The log rows and
the effects owed are built by the engine's own builders (``log_rows.log_fields``,
``owed_effects.owed_rows``), keeping only the fields the historical log has.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.core.exceptions import FieldDoesNotExist

from ..model.triggers import Event
from ..work import names
from .log_rows import log_fields
from .owed_effects import owed_rows


def rename_step(rows: Any, changes: dict[str, Any], owed: Any, old: str, new: str) -> None:
    """``RenameStep``: the records in ``rows`` take ``changes`` (the new name); what entries
    into the old name owe (``owed``, ``None`` before the table exists), the new name owes."""
    rows.update(**changes)
    if owed is not None:
        owed.filter(step=old).update(step=new)


def move_records(
    rows: Any,
    entered: dict[Any, Any],
    changes: dict[str, Any],
    event: Event,
    now: Any,
    *,
    log_to: tuple[Any, Any] | None,
    effects_to: tuple[Any, Any] | None,
    chunk_size: int,
) -> None:
    """``MoveRecords``: the rows ``entered`` names (key -> the entry instant they leave)
    enter ``event.to_state`` with ``changes``, a chunk at a time; with each chunk, the
    effect the entry owes (``effects_to``: the effect model and content type) and its log
    rows (``log_to``: the log model and content type)."""
    pks, db = list(entered), rows.db
    for start in range(0, len(pks), chunk_size):
        chunk = pks[start : start + chunk_size]
        rows.filter(pk__in=chunk).update(**changes)
        if effects_to is not None:
            effect_model, content_type = effects_to
            entries = [(pk, now) for pk in chunk]
            owed = owed_rows(effect_model, content_type, event.to_state, entries)
            effect_model._base_manager.db_manager(db).bulk_create(owed)
        if log_to is not None:
            log_model = log_to[0]
            rows_of_log = [
                _log_row(rows.model, log_to, pk, event, entered[pk], now) for pk in chunk
            ]
            log_model._base_manager.db_manager(db).bulk_create(rows_of_log)


def owe(
    effects_to: tuple[Any, Any],
    step: str,
    entries: Any,
    db: str,
    attempts: Any = None,
    batch_size: int = 500,
) -> None:
    """``OweUnranEffects``: owe ``step``'s ``on_enter`` to each ``(key, entry instant)``,
    carrying over what release 2 spent on it (``attempts``: its ``WorkAttempt`` model)."""
    effect_model, content_type = effects_to
    rows = owed_rows(effect_model, content_type, step, entries)
    spent = _spent_attempts(attempts, content_type, step, rows, db) if attempts else {}
    for row in rows:
        attempt = spent.get(row.object_id)
        if attempt is not None:
            row.attempts, row.last_error = attempt.attempts, attempt.last_error
            row.interruptions = attempt.interruptions
            row.due_at = None if attempt.halted else (attempt.retry_at or row.entered_at)
    effect_model._base_manager.db_manager(db).bulk_create(rows, batch_size=batch_size)


def _spent_attempts(
    attempts: Any, content_type: Any, step: str, owed: list[Any], db: str
) -> dict[str, Any]:
    """Release 2's attempt rows of the work ``enter:<step>`` counting the owed entries
    (by key), taken out of that table: from now on the owed effect counts them."""
    rows = attempts._base_manager.db_manager(db).filter(
        content_type_id=content_type.pk, work=names.entry_work(step)
    )
    entered = {row.object_id: row.entered_at for row in owed}
    spent = {row.object_id: row for row in rows if entered.get(row.object_id) == row.round_key}
    rows.delete()
    return spent


def _log_row(
    model: Any, log_to: tuple[Any, Any], pk: Any, event: Event, left: Any, now: Any
) -> Any:
    """The log row of one record that left the stay begun at ``left``, less the fields the
    historical log does not have yet."""
    log_model, content_type = log_to
    values = log_fields(model, pk, replace(event, from_state_entered_at=left))
    known = {name: value for name, value in values.items() if _has_field(log_model, name)}
    return log_model(content_type=content_type, occurred_at=now, **known)


def _has_field(model: Any, name: str) -> bool:
    try:
        model._meta.get_field(name)
    except FieldDoesNotExist:
        return False
    return True
