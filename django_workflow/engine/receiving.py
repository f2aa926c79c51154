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
step offering the transition (``buffering``), in that transaction, oldest first, unless
its buffer ran out (``expired``).

``deliver_many`` delivers a batch in one transaction, each event as ``deliver`` would.
This room owns the delivery rows (their statements: ``delivery_statements``);
``manual.take_locked`` moves the record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.core.exceptions import ValidationError
from django.db import router, transaction
from django.utils import timezone

from ..declaration import Receive
from ..errors import (
    InvalidDelivery,
    InvalidLogValue,
    TransitionNotAllowed,
    WorkflowError,
)
from ..model.event_input import deliver_one
from ..model.log_values import check_event_data, text_problem
from ..model.registry import workflow_models
from ..model.triggers import Outcome, Trigger
from ..model.versions import workflow_of
from ..models import EventDelivery
from .manual import take_locked
from .sql import delivery_statements
from .sql.writes import Along, content_type


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
        content_type=content_type(model, db),
    )


def _delivered(model: Any, receive: Receive, row: EventDelivery, db: str) -> Delivery:
    """Store and correlate ``row`` in the caller's transaction."""
    value = model._meta.get_field(receive.key).to_python(row.key)
    if not delivery_statements.insert_first(row, db):  # stored as a duplicate
        return Delivery(Outcome.DUPLICATE, holding(model, receive, value, db), row)
    record = holding(model, receive, value, db, lock=True)
    outcome = _correlate(record, receive, row, db)
    if outcome != Outcome.APPLIED:  # an applied one was written with its move
        if record is not None:
            row.object_id = str(record.pk)
        row.outcome = outcome
        delivery_statements.settle(row, db)
    return Delivery(outcome, record, row)


def receiver(event: Any) -> tuple[Any, Receive]:
    """The model receiving ``event`` and its ``Receive``; ``InvalidDelivery`` for a name no
    workflow receives."""
    found = receivers().get(event) if isinstance(event, str) else None
    if found is None:
        raise InvalidDelivery(
            f"No workflow receives the event {event!r}; the events received are: "
            f"{', '.join(sorted(receivers())) or 'none'}."
        )
    return found


@cache
def receivers() -> dict[str, tuple[Any, Receive]]:
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
    if isinstance(id, str) and text_problem(id):
        raise InvalidDelivery(f"An event's id {text_problem(id)}")
    if data is not None and not isinstance(data, dict):
        raise InvalidDelivery(f"An event's data is a JSON object (a dict) or None, not {data!r}.")
    try:
        check_event_data(data)  # stored with the delivery: what every database reads back
    except InvalidLogValue as problem:
        raise InvalidDelivery(f"An event's data {problem.problem}") from None
    if seq is not None and (
        isinstance(seq, bool) or not isinstance(seq, int) or not -(2**63) <= seq < 2**63
    ):
        raise InvalidDelivery(
            f"An event's seq is a whole number of at most 64 bits or None, not {seq!r}."
        )


def _key_value(model: Any, receive: Receive, key: Any) -> Any:
    """``key`` as the key field holds it (``"7"`` for an integer field is 7)."""
    field = model._meta.get_field(receive.key)
    if isinstance(key, str) and text_problem(key):
        raise InvalidDelivery(f"An event's key {text_problem(key)}")
    try:
        value = field.to_python(key)
        field.run_validators(value)  # an integer key beyond its column's range
    except ValidationError as problem:
        raise InvalidDelivery(
            f"An event's key {key!r} is no value of {model.__name__}.{receive.key}: "
            f"{' '.join(problem.messages)}"
        ) from None
    if value is None or value == "":
        raise InvalidDelivery(f"An event for {model.__name__} needs a key ({receive.key}).")
    if len(str(value)) > 255:
        raise InvalidDelivery(f"An event's key has at most 255 characters, not {key!r}.")
    return value


def holding(model: Any, receive: Receive, value: Any, db: str, lock: bool = False) -> Any:
    return delivery_statements.holding(model, receive.key, value, db, lock)


def _correlate(record: Any, receive: Receive, row: EventDelivery, db: str) -> Outcome:
    """The outcome of a first delivery for ``record`` (locked, or ``None``), applied when
    it can be."""
    kept = Outcome.BUFFERED if receive.buffer is not None else None
    if record is None:
        return kept or Outcome.UNMATCHED
    if stale(record, row, db):
        return Outcome.STALE
    if _applied(record, receive, row, db):
        return Outcome.APPLIED
    return kept or Outcome.IGNORED


def stale(record: Any, row: EventDelivery, db: str) -> bool:
    """Whether ``row``'s ``seq`` is not above the highest applied one of its event for
    ``record``."""
    if row.seq is None:
        return False
    highest = delivery_statements.highest_seq(row.content_type_id, str(record.pk), row.event, db)
    return highest is not None and row.seq <= highest


def _applied(record: Any, receive: Receive, row: EventDelivery, db: str) -> bool:
    """Call the transition on ``record`` if its step offers it (and its ``when`` and
    routes let it); a refusal writes nothing (``take_locked``). The delivery's row is
    written ``applied`` with the move, before buffered events the move lets in are
    looked at: one older in its sender's order is then stale."""
    row.outcome, row.object_id, row.applied_at = Outcome.APPLIED, str(record.pk), timezone.now()
    try:
        apply_event(record, receive, row, along=delivery_statements.settling(row, db))
    except InvalidDelivery:
        raise
    except WorkflowError:
        row.applied_at = None
        return False
    return True


def apply_event(
    record: Any, receive: Receive, row: EventDelivery, along: Along | None = None
) -> None:
    """The transition, as trigger ``event``: no actor, no policy, ``data``'s accepted
    values, the log row's ``data`` naming the event. ``record`` is locked, as read;
    ``along`` is written with the move."""
    workflow = workflow_of(record)
    step = getattr(record, workflow.state_attribute)
    declared = workflow.transition(step, receive.transition)
    if declared is None:
        raise TransitionNotAllowed(record, receive.transition, step)
    accepted = _accepted(type(record), declared.accept, row.data or {})
    log_data = {"event": row.event, "id": row.event_id}
    take_locked(record, receive.transition, accepted, log_data, Trigger.EVENT, along)


def _accepted(model: Any, accept: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The accepted values found in ``data``, as their fields hold them."""
    values = {}
    for name in accept:
        if name in data:
            field = model._meta.get_field(name)
            try:
                values[name] = field.to_python(data[name])
                field.run_validators(values[name])  # its range, its length: as a form would
                if field.is_relation:  # a key: the range of the key it points at
                    field.target_field.run_validators(values[name])
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
        for declared in declarations(model.workflow, receive.transition):
            _accepted(model, declared.accept, data)


def declarations(workflow: Any, name: str) -> list[Any]:
    return [
        workflow.transition(step, name)
        for step in workflow.steps
        if workflow.transition(step, name) is not None
    ]
