"""Firing a service-level clock's warning or breach that calls a transition, or nothing
(one calling a model method fires like an action timeout: ``running.fire``).

Each record is locked alone (``SKIP LOCKED``: another worker firing it has it), checked
to be still due, and its mark written in the same ``UPDATE`` as the move the transition
makes, so an alarm fires once per record however many workers poll.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from ..model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from ..process.pacing import turn
from ..scheduling import due_at
from ..work import SlaAlarm, due_instants
from .kind_engines import KindEngine, register
from .moves import (
    apply,
    database,
    entry_changes,
    log_event,
    move_locked,
    write,
)
from .picking import Picking
from .rescheduling import reschedule
from .routes import choose_route
from .sql import probes
from .timed_actions import fire_due


def fire_alarms(model: Any, work: Any, pks: list[Any], now: datetime, db: str) -> list[Any]:
    """Fire ``work`` for each record still due at ``now``; the keys of those it fired for."""
    fired, idle = [], []
    for pk in pks:
        with turn(db), transaction.atomic(using=db):
            record = probes.locked(model, pk, db)
            if record is None:
                continue  # another worker holds it: it fires it, or its write reschedules
            due = due_at(work, record, now)
            if due is None or due > now:
                idle.append(pk)
                continue
            _fire(record, work, now)
            fired.append(pk)
    if idle:
        reschedule(model, idle, db, now)
    return fired


def _fire(record: Any, work: Any, now: datetime) -> None:
    workflow = workflow_of(record)
    data = {"sla": work.sla, "alarm": work.alarm}
    target = _target(record, work)
    if target is not None:
        event = Event(work.step, target, work.transition, Trigger.TIMEOUT, data=data)
        changes = {**entry_changes(workflow, target, now), work.mark: now}
        move_locked(record, changes, _entered(record, event))
        return
    _mark(
        record,
        work,
        now,
        _entered(record, Event(work.step, work.step, work.entity, Trigger.TIMEOUT, data=data)),
    )


def _target(record: Any, work: Any) -> str | None:
    """The step the alarm's transition leads to from the current step; ``None`` when it
    calls none, or the step does not offer it (then the alarm is only marked)."""
    if work.transition is None:
        return None
    declared = workflow_of(record).transition(work.step, work.transition)
    if declared is None:
        return None
    return declared.to or choose_route(declared.routes, record, database(record))


def _entered(record: Any, event: Event) -> Event:
    return Event(
        event.from_state,
        event.to_state,
        event.name,
        event.trigger,
        data=event.data,
        from_state_entered_at=getattr(record, STATE_ENTERED_AT),
    )


def _mark(record: Any, work: Any, now: datetime, event: Event) -> None:
    """The mark and the due instant it leaves, by one ``UPDATE`` of the locked row, and
    the log row (in place)."""
    model, db = type(record), database(record)
    setattr(record, work.mark, now)
    changes = {work.mark: now, NEXT_DUE_AT: due_instants.next_due(record, now)}
    write(model._base_manager.using(db).filter(pk=record.pk), changes, db)
    apply(record, changes)
    log_event(record, event)


def fire_picked(picking: Picking, work: Any, records: list[Any]) -> list[Any]:
    """An alarm with an action runs it as a timeout's; one that calls a transition, or
    nothing, is fired here."""
    if work.action is not None:
        return fire_due(picking, work, records)
    pks = [record.pk for record in records]
    return fire_alarms(picking.model, work, pks, picking.now, picking.db)


register(SlaAlarm, KindEngine(fire=fire_picked))
