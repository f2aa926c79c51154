"""A log row (``TransitionLog``): its values built directly from the ``Event``, and the
one function that writes log rows (``write``), but the row a plain single move writes in
its own ``UPDATE``'s statement (``sql.writes.update_logged``, with ``log_values``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Model
from django.utils import timezone

from ..errors import error_text
from ..model.triggers import Event, Trigger
from ..models import TransitionLog
from ..process import meters
from .sql import writes

#: Log rows to a statement of ``bulk_create``.
BATCH_SIZE = 500


def _declared_comment(model: Any, event: Event) -> str:
    """``Transition(comment=...)``: a manual move's comment when nobody gave one."""
    if event.trigger != Trigger.MANUAL:
        return ""
    declared = model.workflow.transition(event.from_state, event.name)
    return getattr(declared, "comment", "") or ""


def log_row(model: Any, pk: Any, event: Event, db: str) -> TransitionLog:
    return TransitionLog(**log_values(model, pk, event, db))


def log_values(model: Any, pk: Any, event: Event, db: str) -> dict[str, Any]:
    """The log row of ``event``, by attribute name: what ``log_row`` builds an instance of,
    and what a single row's ``INSERT`` sends without one."""
    return {
        "content_type_id": writes.content_type_id(model, db),
        "occurred_at": timezone.now(),
        **log_fields(model, pk, event),
    }


def log_fields(model: Any, pk: Any, event: Event) -> dict[str, Any]:
    """The log row of ``event`` by attribute name, but its content type and instant (which a
    migration's historical log sets its own way)."""
    actor, error, reverses = event.actor, event.error, event.reverses
    user = isinstance(actor, Model) and isinstance(actor, get_user_model())
    return {
        "object_id": str(pk),
        "from_state": event.from_state,
        "to_state": event.to_state,
        "transition_name": event.name,
        "triggered_by": event.trigger,
        "from_state_entered_at": event.from_state_entered_at,
        "actor_id": actor.pk if user else None,
        "actor_repr": "" if actor is None else str(actor)[:255],
        "attempt": event.attempt,
        "error": "" if error is None else error_text(error),
        "reverses_id": None if reverses is None else reverses.pk,
        "comment": event.comment or _declared_comment(model, event),
        "data": event.data,
        "on_behalf_of_id": getattr(event.on_behalf_of, "pk", None),
    }


def write(model: Any, entries: list[tuple[Any, Event]], db: str) -> None:
    """Log ``(pk, event)`` of each record, when the workflow logs, and count the events.

    While anyone listens to the log's save signals, each row is saved through the ORM and
    sends them; otherwise one row is one ``INSERT`` built once, and many go by
    ``bulk_create``. All of a call's entries have one event but for the record it names.
    """
    if not entries:
        return
    meters.moved(model, entries[0][1], db, len(entries))
    if model.workflow.log is not True:
        return
    if not writes.logs_quietly():
        for pk, event in entries:
            log_row(model, pk, event, db).save(using=db)
    elif len(entries) == 1:
        writes.insert_log(log_values(model, *entries[0], db), db)
    else:
        rows = [log_row(model, pk, event, db) for pk, event in entries]
        TransitionLog.objects.using(db).bulk_create(rows, batch_size=BATCH_SIZE)
