"""Buffered events (``Receive(buffer=…)``): kept when their record could not take them,
applied when it is created or enters a step offering the transition, in that
transaction, oldest first, through the engine like any applied event; ``expired`` once
their buffer ran out. ``after_moves`` is the hook of every creation and step change
(``moves.AFTER_MOVES``); ``recheck_buffered`` is the worker's sweep and
``workflow_deliver --buffered``."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from functools import cache
from typing import Any

from django.db import router, transaction
from django.utils import timezone

from ..declaration import Receive
from ..durations import parse_timedelta
from ..errors import WorkflowError
from ..model.triggers import Outcome
from ..model.versions import workflow_of
from ..models import EventDelivery
from . import moves
from .receiving import apply_event, declarations, holding, receivers, stale
from .sql import delivery_statements
from .sql.writes import Question


def after_moves(
    model: Any,
    pks: list[Any],
    db: str,
    step: str | None,
    instance: Any = None,
    answers: moves.Answers | None = None,
) -> None:
    """The hook of every creation and step change: records of ``model`` entering ``step``
    take the buffered events whose transition ``step`` offers, oldest first (each move
    comes back here for the step it enters). ``instance`` (the caller's, of a single
    record) follows its record on. A step change that answered ``waiting`` with no
    needs no lookup."""
    events = _offered(model, step)
    if not events or not pks or (answers or {}).get(waiting) is False:
        return
    by_key = _buffered(model, pks, db, events)
    for pk, deliveries in by_key.items():
        moved = _take_buffered(model, pk, db, deliveries)
        if moved is not None and instance is not None and instance.pk == pk:
            moves.apply(instance, _written(moved, events))


def waiting(model: Any, step: str | None, db: str) -> Question | None:
    """Whether deliveries of the buffered events ``step`` offers wait for the record
    entering it: asked in the step change's own statement (``moves.ASKED_ON_ENTRY``),
    whose snapshot, taken with the record locked, holds every event buffered for it
    (read committed, PostgreSQL's default isolation)."""
    events = _offered(model, step)
    if not events:
        return None
    names: dict[str, list[str]] = {}
    for name, receive in events.items():
        names.setdefault(receive.key, []).append(name)
    return delivery_statements.waiting_question(model, names, db)


def _offered(model: Any, step: str | None) -> dict[str, Receive]:
    """The buffered events of ``model`` whose transition ``step`` offers."""
    workflow = model.workflow
    if step is None or workflow is None:
        return {}
    return {
        name: receive
        for name, receive in _buffering(model).items()
        if workflow.transition(step, receive.transition) is not None
    }


@cache
def _buffering(model: Any) -> dict[str, Receive]:
    return {
        name: receive
        for name, receive in model.workflow.events.items()
        if isinstance(receive, Receive) and receive.buffer is not None
    }


def _buffered(
    model: Any, pks: list[Any], db: str, events: dict[str, Receive]
) -> dict[Any, list[tuple[EventDelivery, Receive]]]:
    """Per record among ``pks``, its buffered deliveries of ``events``, oldest first."""
    found: dict[Any, list[tuple[EventDelivery, Receive]]] = {}
    for key_field in {receive.key for receive in events.values()}:
        names = [name for name, receive in events.items() if receive.key == key_field]
        if len(pks) == 1:  # one move's: one statement, when the key can be compared so
            waiting = delivery_statements.buffered_for(model, pks[0], key_field, names, db)
            if waiting is not None:
                for delivery in waiting:
                    found.setdefault(pks[0], []).append((delivery, events[delivery.event]))
                continue
        rows = model._base_manager.using(db).filter(pk__in=pks)
        pk_of = {str(value): pk for pk, value in rows.values_list("pk", key_field)}
        waiting = EventDelivery.objects.using(db).filter(
            event__in=names, key__in=list(pk_of), outcome=Outcome.BUFFERED
        )
        for delivery in waiting.order_by("delivered_at", "pk"):
            found.setdefault(pk_of[delivery.key], []).append((delivery, events[delivery.event]))
    for deliveries in found.values():
        deliveries.sort(key=lambda pair: (pair[0].delivered_at, pair[0].pk))
    return found


def _take_buffered(
    model: Any, pk: Any, db: str, deliveries: list[tuple[EventDelivery, Receive]]
) -> Any:
    """Apply the oldest of ``deliveries`` the record can take; mark those whose buffer ran
    out ``expired`` and those out of order ``stale`` on the way. The moved record, or
    ``None``."""
    record = model._base_manager.using(db).select_for_update().filter(pk=pk).first()
    now = timezone.now()
    for delivery, receive in deliveries:
        if _expired(delivery, receive, now):
            _settle(delivery, Outcome.EXPIRED, record, db)
        elif stale(record, delivery, db):
            _settle(delivery, Outcome.STALE, record, db)
        elif _applied_late(record, receive, delivery, db):
            return record
    return None


def _applied_late(record: Any, receive: Receive, delivery: EventDelivery, db: str) -> bool:
    """Apply a buffered ``delivery`` held by this transaction, marked ``applied`` first (the
    move comes back to ``after_moves``, which must not see it buffered); a refusal undoes
    both and leaves it buffered."""
    try:
        with transaction.atomic(using=db):
            if not _claimed(delivery, db):
                return False
            delivery.applied_at = timezone.now()
            _settle(delivery, Outcome.APPLIED, record, db)
            apply_event(record, receive, delivery)
    except WorkflowError:
        delivery.outcome, delivery.applied_at = Outcome.BUFFERED, None
        return False
    return True


def _expired(delivery: EventDelivery, receive: Receive, now: datetime) -> bool:
    return delivery.delivered_at + parse_timedelta(receive.buffer) < now


def _claimed(delivery: EventDelivery, db: str) -> bool:
    """Whether this transaction holds ``delivery`` still buffered (another one applying it
    at the same time gets none)."""
    rows = EventDelivery.objects.using(db).select_for_update().filter(pk=delivery.pk)
    return rows.filter(outcome=Outcome.BUFFERED).exists()


def _settle(delivery: EventDelivery, outcome: Outcome, record: Any, db: str) -> None:
    """Give a buffered ``delivery`` its outcome (one no longer buffered keeps its own)."""
    object_id = delivery.object_id if record is None else str(record.pk)
    rows = EventDelivery.objects.using(db).filter(pk=delivery.pk, outcome=Outcome.BUFFERED)
    if rows.update(outcome=outcome, object_id=object_id, applied_at=delivery.applied_at):
        delivery.outcome, delivery.object_id = outcome, object_id


def _written(record: Any, events: dict[str, Receive]) -> dict[str, Any]:
    """What a buffered event's move wrote: the workflow's columns and accepted values."""
    workflow = workflow_of(record)
    names = set(workflow.owned_columns)
    for receive in events.values():
        for transition in declarations(workflow, receive.transition):
            names.update(transition.accept)
    return {name: record.__dict__[name] for name in names if name in record.__dict__}


def recheck_buffered(models: Any = None) -> Counter[str]:
    """Every buffered delivery (of ``models``: default all) looked at again, oldest first,
    each in a transaction of its own: applied when its record can take it now (an event
    delivered while its record was being created found none), ``expired`` once its buffer
    ran out. Counts what became of them (``"buffered"``: still waiting)."""
    counts: Counter[str] = Counter()
    receiving = {model for model, _ in receivers().values()}
    for model in receiving if models is None else receiving & set(models):
        events = _buffering(model)
        db = router.db_for_write(model)
        for delivery in buffered_rows(model, db):
            with transaction.atomic(using=db):
                counts[_recheck(model, events[delivery.event], delivery, db)] += 1
    return counts


def buffered_rows(model: Any, db: str) -> Any:
    """``model``'s buffered deliveries, oldest first (their partial index serves it)."""
    waiting = EventDelivery.objects.using(db).filter(outcome=Outcome.BUFFERED)
    return waiting.filter(event__in=list(_buffering(model))).order_by("delivered_at", "pk")


def _recheck(model: Any, receive: Receive, delivery: EventDelivery, db: str) -> str:
    value = model._meta.get_field(receive.key).to_python(delivery.key)
    record = holding(model, receive, value, db, lock=True)
    if record is not None:
        _take_buffered(model, record.pk, db, [(delivery, receive)])
    elif _expired(delivery, receive, timezone.now()):
        _settle(delivery, Outcome.EXPIRED, None, db)
    # as stored: a move earlier in this re-check may have applied it already
    return EventDelivery.objects.using(db).values_list("outcome", flat=True).get(pk=delivery.pk)


def acts_after(model: Any, step: str) -> bool:
    """Whether ``after_moves`` has anything to do for a record of ``model`` entering ``step``."""
    return bool(_offered(model, step))


moves.AFTER_MOVES.append(after_moves)
moves.ACTING_AFTER.append(acts_after)
moves.ASKED_ON_ENTRY.append(waiting)
