"""A timeout that moves (``Timeout(transition_to=...)``): its due records moved a batch
at a time, one claiming UPDATE per batch (``FOR UPDATE SKIP LOCKED`` on PostgreSQL,
so any number of processes may run the same timeout at once)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from ..model.triggers import Event, Trigger
from ..model.versions import version_workflow
from ..process import meters, stopping, traces
from ..process.pacing import turn
from ..scheduling import due_at
from ..work import TransitionTimeout, Work
from .kind_engines import KindEngine, register
from .moves import entry_changes, move_many
from .picking import Picking


def _event(work: Work) -> Event:
    return Event(work.step, work.transition_to, work.entity, Trigger.TIMEOUT)


def move_due(picking: Picking, work: Work, records: list[Any]) -> list[Any]:
    """Move the records the due-instant walk picked, each re-checked locked."""
    model, now, db = picking.model, picking.now, picking.db
    workflow = version_workflow(model, work.version)
    changes = entry_changes(workflow, work.transition_to, now)
    state = model.workflow.state_attribute
    pks = [record.pk for record in records]
    with transaction.atomic(using=db):
        claim = model.workflow.queryset(db).filter(pk__in=pks, **{state: work.step})
        locked = claim.select_for_update(skip_locked=True)
        instants = {record.pk: due_at(work, record, now) for record in locked}
        due = [pk for pk, at in instants.items() if at is not None and at <= now]
        if not due:
            return []
        rows = model._base_manager.using(db).filter(pk__in=due)
        moved = list(move_many(model, rows, changes, _event(work), db, workflow))
        meters.fired(model, [instants[pk] for pk in moved], db)
        return moved


@traces.unit_of_work
def move_matching(picking: Picking, work: Work) -> list[Any]:
    """A self-scheduled timeout: the records its ``match`` finds, moved a batch at a time."""
    model, db, size = picking.model, picking.db, picking.batch_size
    workflow = version_workflow(model, work.version)
    changes = entry_changes(workflow, work.transition_to, picking.now)
    fired: list[Any] = []
    skip: set[Any] = set()
    while not stopping.requested():
        with turn(db), transaction.atomic(using=db):
            claim = picking.matching(work, skip).select_for_update(skip_locked=True)[:size]
            if work.exact:
                claimed = moved = move_many(model, claim, changes, _event(work), db, workflow)
            else:  # business days: the query is a pre-filter, due_at decides
                records = list(claim)
                claimed = [record.pk for record in records]
                due = [record.pk for record in records if picking.is_due(work, record)]
                skip.update(set(claimed) - set(due))
                rows = model._base_manager.using(db).filter(pk__in=due)
                moved = move_many(model, rows, changes, _event(work), db, workflow) if due else []
        fired.extend(moved)
        if len(claimed) < size:
            break
    return fired


register(
    TransitionTimeout,
    KindEngine(fire=move_due, run_alone=lambda picking, work: picking.picked(work, move_matching)),
)
