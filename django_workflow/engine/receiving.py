"""Events from outside (``Workflow.events``): a delivery correlated to its record by the
``Receive``'s key, and applied through the record's transition exactly once.

``deliver`` stores every delivery (``EventDelivery``). Its row is inserted first, in the
delivery's transaction: the unique constraint on ``(event, event_id)`` makes a second
delivery of the same event insert nothing there (``ON CONFLICT DO NOTHING``; on
PostgreSQL it waits for the first's commit) so processes racing with one event agree
without asking each other; the loser stores a ``duplicate`` row. Then the record is
locked (``SELECT … FOR UPDATE``) before it is read, so deliveries for one record, and a
delivery beside the record's own move, take turns: a buffered event is either seen by
the move that makes the record able to take it, or finds the record already moved.

An applied event is the transition called with actor ``None``, policies not asked, the
accepted values taken from ``data``, logged with trigger ``event`` and ``data`` naming the
event and its id. A buffered event is applied when its record is created or enters a
step offering the transition (``after_moves``, registered in ``moves.AFTER_MOVES``), in
that transaction, oldest first, unless its buffer ran out (``expired``).

``deliver_many`` delivers a batch in one transaction, each event as ``deliver`` would.
This room owns the delivery rows (their statements: ``delivery_statements``);
``manual.take_locked`` moves the record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import router, transaction
from django.utils import timezone

from ..declaration import Receive
from ..durations import parse_timedelta
from ..errors import InvalidDelivery, TransitionNotAllowed, WorkflowError
from ..events import Outcome, Trigger
from ..models import EventDelivery
from ..registry import workflow_models
from . import delivery_statements as statements
from . import moves
from .manual import take_locked


@dataclass(frozen=True)
class Delivery:
    """What ``deliver`` did: its ``outcome``, the ``record`` when one holds the key, and the
    stored ``EventDelivery`` row."""

    outcome: Outcome
    record: Any
    row: EventDelivery


def deliver(
    event: str, key: Any, *, id: Any, data: dict[str, Any] | None = None, seq: int | None = None
) -> Delivery:
    """Deliver the event ``event`` whose sender calls it ``id``, for the record whose key
    field holds ``key``; ``data`` gives the transition's accepted values, ``seq`` the
    sender's order. Raises ``InvalidDelivery`` (storing nothing) when it cannot be read."""
    model, receive = receiver(event)
    row = _row(model, receive, event, key, id, data, seq)
    db = router.db_for_write(model)
    with transaction.atomic(using=db):
        return _delivered(model, receive, row, db)


def deliver_many(events: Iterable[Mapping[str, Any]]) -> list[Delivery]:
    """Deliver ``events`` in order, in one transaction: each a mapping as the webhook takes
    it (``event``, ``key``, ``id``, perhaps ``data`` and ``seq``). Returns their
    ``Delivery``s in order. Every event is read before anything is stored: one that cannot
    be read raises ``InvalidDelivery`` naming its position, and none is delivered."""
    from ..views import deliver_one  # the webhook's reading of an event

    planned = []
    for index, event in enumerate(events):
        try:
            planned.append(deliver_one(event, _planned))
        except InvalidDelivery as problem:
            raise InvalidDelivery(f"Event {index} of the batch: {problem}") from None
    with ExitStack() as transactions:
        for db in dict.fromkeys(db for *_, db in planned):
            transactions.enter_context(transaction.atomic(using=db))
        return [_delivered(*plan) for plan in planned]


def _planned(
    event: Any, key: Any, *, id: Any, data: Any = None, seq: Any = None
) -> tuple[Any, Receive, EventDelivery, str]:
    """What ``deliver`` would store and where, before anything is."""
    model, receive = receiver(event)
    return (
        model,
        receive,
        _row(model, receive, event, key, id, data, seq),
        router.db_for_write(model),
    )


def _row(
    model: Any, receive: Receive, event: str, key: Any, id: Any, data: Any, seq: Any
) -> EventDelivery:
    """The delivery's row, unsaved, once it is known to be readable."""
    _check(id, data, seq)
    value = _key_value(model, receive, key)
    _readable(model, receive, data)
    db = router.db_for_write(model)
    return EventDelivery(
        event=event,
        event_id=str(id),
        key=str(value),
        data=data,
        seq=seq,
        outcome=Outcome.UNMATCHED,
        content_type=ContentType.objects.db_manager(db).get_for_model(model),
    )


def _delivered(model: Any, receive: Receive, row: EventDelivery, db: str) -> Delivery:
    """Store and correlate ``row`` in the caller's transaction."""
    value = model._meta.get_field(receive.key).to_python(row.key)
    if not statements.insert_first(row, db):  # stored as a duplicate
        return Delivery(Outcome.DUPLICATE, _holding(model, receive, value, db), row)
    record = _holding(model, receive, value, db, lock=True)
    outcome = _correlate(record, receive, row, db)
    if record is not None:
        row.object_id = str(record.pk)
    row.outcome = outcome
    statements.settle(row, db)
    return Delivery(outcome, record, row)


def receiver(event: Any) -> tuple[Any, Receive]:
    """The model receiving ``event`` and its ``Receive``; ``InvalidDelivery`` for a name no
    workflow receives."""
    found = _receivers().get(event) if isinstance(event, str) else None
    if found is None:
        raise InvalidDelivery(
            f"No workflow receives the event {event!r}; the events received are: "
            f"{', '.join(sorted(_receivers())) or 'none'}."
        )
    return found


@cache
def _receivers() -> dict[str, tuple[Any, Receive]]:
    return {
        name: (model, receive)
        for model in workflow_models()
        for name, receive in model.workflow.events.items()
        if isinstance(receive, Receive)
    }


def _check(id: Any, data: Any, seq: Any) -> None:
    if isinstance(id, bool) or not isinstance(id, str | int) or not 0 < len(str(id)) <= 255:
        raise InvalidDelivery(
            f"An event's id is a string of 1 to 255 characters or a number, not {id!r}."
        )
    if data is not None and not isinstance(data, dict):
        raise InvalidDelivery(f"An event's data is a JSON object (a dict) or None, not {data!r}.")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq >= 2**63):
        raise InvalidDelivery(f"An event's seq is a whole number or None, not {seq!r}.")


def _key_value(model: Any, receive: Receive, key: Any) -> Any:
    """``key`` as the key field holds it (``"7"`` for an integer field is 7)."""
    field = model._meta.get_field(receive.key)
    try:
        value = field.to_python(key)
    except ValidationError as problem:
        raise InvalidDelivery(
            f"{key!r} is no value of {model.__name__}.{receive.key}: {' '.join(problem.messages)}"
        ) from None
    if value is None or value == "":
        raise InvalidDelivery(f"An event for {model.__name__} needs a key ({receive.key}).")
    if len(str(value)) > 255:
        raise InvalidDelivery(f"An event's key has at most 255 characters, not {key!r}.")
    return value


def _holding(model: Any, receive: Receive, value: Any, db: str, lock: bool = False) -> Any:
    return statements.holding(model, receive.key, value, db, lock)


def _correlate(record: Any, receive: Receive, row: EventDelivery, db: str) -> Outcome:
    """The outcome of a first delivery for ``record`` (locked, or ``None``), applied when
    it can be."""
    kept = Outcome.BUFFERED if receive.buffer is not None else None
    if record is None:
        return kept or Outcome.UNMATCHED
    if _stale(record, row, db):
        return Outcome.STALE
    if _applied(record, receive, row, db):
        return Outcome.APPLIED
    return kept or Outcome.IGNORED


def _stale(record: Any, row: EventDelivery, db: str) -> bool:
    """Whether ``row``'s ``seq`` is not above the highest applied one of its event for
    ``record``."""
    if row.seq is None:
        return False
    highest = statements.highest_seq(row.content_type_id, str(record.pk), row.event, db)
    return highest is not None and row.seq <= highest


def _applied(record: Any, receive: Receive, row: EventDelivery, db: str) -> bool:
    """Call the transition on ``record`` if its step offers it (and its ``when`` and
    routes let it); a refusal writes nothing (``take_locked``)."""
    try:
        _call(record, receive, row)
    except InvalidDelivery:
        raise
    except WorkflowError:
        return False
    row.applied_at = timezone.now()
    return True


def _call(record: Any, receive: Receive, row: EventDelivery) -> None:
    """The transition, as trigger ``event``: no actor, no policy, ``data``'s accepted
    values, the log row's ``data`` naming the event. ``record`` is locked, as read."""
    workflow = type(record).workflow
    step = getattr(record, workflow.state_attribute)
    declared = workflow.transition(step, receive.transition)
    if declared is None:
        raise TransitionNotAllowed(record, receive.transition, step)
    accepted = _accepted(type(record), declared.accept, row.data or {})
    log_data = {"event": row.event, "id": row.event_id}
    take_locked(record, receive.transition, accepted, log_data, Trigger.EVENT)


def _accepted(model: Any, accept: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The accepted values found in ``data``, as their fields hold them."""
    values = {}
    for name in accept:
        if name in data:
            field = model._meta.get_field(name)
            try:
                values[name] = field.to_python(data[name])
            except ValidationError as problem:
                raise InvalidDelivery(
                    f"{data[name]!r} is no value of {model.__name__}.{name}: "
                    f"{' '.join(problem.messages)}"
                ) from None
    return values


def _readable(model: Any, receive: Receive, data: Any) -> None:
    """``InvalidDelivery`` unless every declaration of the transition can accept the values
    ``data`` holds for it: a buffered event is applied later, perhaps in another step."""
    if data:
        for declared in _declared(model.workflow, receive.transition):
            _accepted(model, declared.accept, data)


def after_moves(
    model: Any, pks: list[Any], db: str, step: str | None, instance: Any = None
) -> None:
    """The hook of every creation and step change: records of ``model`` entering ``step``
    take the buffered events whose transition ``step`` offers, oldest first (each move
    comes back here for the step it enters). ``instance`` (the caller's, of a single
    record) follows its record on."""
    events = _offered(model, step)
    if not events or not pks:
        return
    by_key = _buffered(model, pks, db, events)
    for pk, deliveries in by_key.items():
        moved = _take_buffered(model, pk, db, deliveries)
        if moved is not None and instance is not None and instance.pk == pk:
            moves.apply(instance, _written(moved, events))


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
            waiting = statements.buffered_for(model, pks[0], key_field, names, db)
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
        elif _stale(record, delivery, db):
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
            _call(record, receive, delivery)
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
    workflow = type(record).workflow
    names = set(workflow.owned_columns)
    for receive in events.values():
        for transition in _declared(workflow, receive.transition):
            names.update(transition.accept)
    return {name: record.__dict__[name] for name in names if name in record.__dict__}


def _declared(workflow: Any, name: str) -> list[Any]:
    return [
        workflow.transition(step, name)
        for step in workflow.steps
        if workflow.transition(step, name) is not None
    ]


def recheck_buffered(models: Any = None) -> Counter[str]:
    """Every buffered delivery (of ``models``: default all) looked at again, oldest first,
    each in a transaction of its own: applied when its record can take it now (an event
    delivered while its record was being created found none), ``expired`` once its buffer
    ran out. Counts what became of them (``"buffered"``: still waiting)."""
    counts: Counter[str] = Counter()
    receiving = {model for model, _ in _receivers().values()}
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
    record = _holding(model, receive, value, db, lock=True)
    if record is not None:
        _take_buffered(model, record.pk, db, [(delivery, receive)])
    elif _expired(delivery, receive, timezone.now()):
        _settle(delivery, Outcome.EXPIRED, None, db)
    # as stored: a move earlier in this re-check may have applied it already
    return EventDelivery.objects.using(db).values_list("outcome", flat=True).get(pk=delivery.pk)


moves.AFTER_MOVES.append(after_moves)
