"""A timeout that acts (``Timeout(action=...)``) and ``every``: each record fired in a
transaction of its own (``running.fire``), so a crash repeats at most the record in
flight and no other writer waits longer than one action."""

from __future__ import annotations

from typing import Any

from ..process import stopping, traces
from ..process.pacing import turn
from ..reading import attempts_read
from ..work import ActionTimeout, EveryWork, Work
from .kind_engines import KindEngine, register
from .picking import Picking
from .rescheduling import reschedule
from .running import fire


def fire_due(picking: Picking, work: Work, records: list[Any]) -> list[Any]:
    """Fire for the records the due-instant walk picked; the keys it fired for."""
    model, now, db = picking.model, picking.now, picking.db
    pks = [record.pk for record in records]
    fired, waiting = [], []
    attempts = picking.attempts(work, pks)
    for pk in pks:
        if stopping.requested():
            break
        row = attempts.get(pk)
        if attempts_read.waiting(row, now):
            waiting.append(pk)
            continue
        with turn(db):  # on SQLite, other writers get theirs between records
            if fire(model, pk, work, now, db, row):
                fired.append(pk)
    if waiting:  # due again at their retry, not at every poll until then
        reschedule(model, waiting, db, now)
    return fired


@traces.unit_of_work
def fire_matching(picking: Picking, work: Work) -> list[Any]:
    """A self-scheduled one: the records its ``match`` finds, a batch at a time."""
    model, now, db = picking.model, picking.now, picking.db
    fired: list[Any] = []
    skip: set[Any] = set()
    for pks in picking.batches(work, skip):
        attempts = picking.attempts(work, pks)
        for pk in pks:
            row = attempts.get(pk)
            if stopping.requested():
                break
            if attempts_read.waiting(row, now):
                skip.add(pk)
                continue
            with turn(db):
                if fire(model, pk, work, now, db, row):
                    fired.append(pk)
                    continue
            skip.add(pk)
    return fired


_ENGINE = KindEngine(
    fire=fire_due, run_alone=lambda picking, work: picking.picked(work, fire_matching)
)
register(ActionTimeout, _ENGINE)
register(EveryWork, _ENGINE)
