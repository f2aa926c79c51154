"""Running a unit of work: pick the due records and hand each to the engine.

Transition timeouts move whole batches: one claiming UPDATE per batch
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so any number of processes may
run the same work at once). Action timeouts and every fire record by record,
each in a transaction of its own, so a crash repeats at most the record in
flight and no other writer waits longer than one action. Automatic steps
are run one record at a time by the engine. Parents due for a join re-check are
locked and evaluated a batch at a time (``join_rechecks``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.db import router, transaction
from django.utils import timezone

from ..model.columns import NEXT_DUE_AT
from ..model.registry import workflow_models
from ..model.triggers import Event, Trigger
from ..process import meters, stopping, traces
from ..process.pacing import turn
from ..reading import attempts_read
from ..scheduling import due_at
from ..signals import work_fired
from ..work import Work
from . import claims, effects, sla_firing
from .join_rechecks import recheck
from .moves import entry_changes, move_many
from .rescheduling import reschedule
from .running import fire
from .sql import probes
from .steps import run_step

#: Named as in release 2, where projects configure it (docs/worker.md).
logger = logging.getLogger("django_workflow.firing")

BATCH_SIZE = 500
#: How many records a "fired for" log line names; it counts the rest.
NAMED_IN_LOG = 10


def run_work(
    model: Any, work_name: str, *, now: datetime | None = None, batch_size: int = BATCH_SIZE
) -> int:
    """Fire ``work_name`` for every record of ``model`` due at ``now``; return how many fired."""
    work = model.workflow.work(work_name)
    return work.run(Firing(model, now or timezone.now(), batch_size))


class Firing:
    """What a kind of work asks of the engine (``work.Runner``): its ``run`` and ``fire``
    pick one of these, so adding a kind adds a class, not a branch here."""

    def __init__(self, model: Any, now: datetime, batch_size: int = BATCH_SIZE) -> None:
        self.model, self.now, self.batch_size = model, now, batch_size
        self.db = router.db_for_write(model)

    def effects(self, work: Work) -> int:
        return effects.run_due(self.model, work.step, now=self.now, batch_size=self.batch_size)

    def deadlines(self, work: Work) -> int:
        return run_due(self.model, [work], now=self.now, batch_size=self.batch_size)[work.name]

    def steps(self, work: Work) -> int:
        return self._picked(work, _run_steps)

    def transitions(self, work: Work) -> int:
        return self._picked(work, _run_transitions)

    def actions(self, work: Work) -> int:
        return self._picked(work, _run_actions)

    def _picked(self, work: Work, run: Any) -> int:
        if not probes.due(self.model, [work], self.now, self.db):  # an idle poll: one lookup
            return 0
        fired = run(self.model, work, self.now, self.db, self.batch_size)
        _report(self.model, work, fired)
        return len(fired)

    @traces.unit_of_work
    def move(self, work: Work, records: list[Any]) -> list[Any]:
        return _move_due(self.model, work, [record.pk for record in records], self.now, self.db)

    @traces.unit_of_work
    def act(self, work: Work, records: list[Any]) -> list[Any]:
        return _fire(self.model, work, records, self.now, self.db)

    @traces.unit_of_work
    def rejoin(self, work: Work, records: list[Any]) -> list[Any]:
        return recheck(self.model, work, [record.pk for record in records], self.now, self.db)

    @traces.unit_of_work
    def release(self, work: Work, records: list[Any]) -> list[Any]:
        return claims.release_due(self.model, work, [r.pk for r in records], self.now, self.db)

    @traces.unit_of_work
    def alarm(self, work: Work, records: list[Any]) -> list[Any]:
        return sla_firing.fire_alarms(self.model, work, [r.pk for r in records], self.now, self.db)


def run_due(
    model: Any, works: list[Work], *, now: datetime | None = None, batch_size: int = BATCH_SIZE
) -> dict[str, int]:
    """Fire the deadlines among ``works`` that are due at ``now``; how many fired, per work.

    The records come from the ``next_due_at`` index alone (a query the planner
    cannot serve another way), soonest first, a batch at a time; ``due_at``
    then says which of their deadlines are due. A record the stored instant
    called due with nothing due — a deadline waiting for its retry, or a due
    instant gone stale — gets it computed again.
    """
    now = now or timezone.now()
    db = router.db_for_write(model)
    fired: dict[str, list[Any]] = {work.name: [] for work in works}
    if not probes.any_due(model, now, db):  # the idle tick: one index lookup
        return dict.fromkeys(fired, 0)
    wanted = {work.name for work in works}
    firing = Firing(model, now, batch_size)
    after = None
    while not stopping.requested():
        batch = _due_batch(model, now, db, after, batch_size)
        if not batch:
            break
        after = (getattr(batch[-1], NEXT_DUE_AT), batch[-1].pk)
        plan, idle = _plan(model, batch, now)
        for work, records in plan.items():
            if work.name in wanted:
                fired[work.name] += work.fire(firing, records)
        if idle:
            reschedule(model, [record.pk for record in idle], db, now)
        if len(batch) < batch_size:
            break
    for work in works:
        _report(model, work, fired[work.name])
    return {name: len(pks) for name, pks in fired.items()}


def _due_batch(model: Any, now: datetime, db: str, after: Any, size: int) -> list[Any]:
    return list(due_rows(model, now, db, after)[:size])


def due_rows(model: Any, now: datetime, db: str, after: Any = None) -> Any:
    """Records due at ``now``, soonest first, after the ``(due, pk)`` of the last batch."""
    rows = model.workflow.queryset(db).filter(**{f"{NEXT_DUE_AT}__lte": now})
    if after is not None:
        due, pk = after
        rows = rows.filter(**{f"{NEXT_DUE_AT}__gte": due}).exclude(
            **{NEXT_DUE_AT: due, "pk__lte": pk}
        )  # one range of the index, walked in its order
    return rows.order_by(NEXT_DUE_AT, "pk")


def _plan(model: Any, batch: list[Any], now: datetime) -> tuple[dict[Work, list[Any]], list[Any]]:
    """Which records each work fires for; and the records with nothing due after all."""
    workflow = model.workflow
    plan: dict[Work, list[Any]] = {}
    idle = []
    for record in batch:
        works = workflow.deadline_works.get(getattr(record, workflow.state_attribute), ())
        due = [work for work in works if _is_due(work, record, now)]
        for work in due:
            plan.setdefault(work, []).append(record)
        if not due:
            idle.append(record)
    return plan, idle


def _fire(model: Any, work: Work, records: list[Any], now: datetime, db: str) -> list[Any]:
    """The keys of the records an action timeout or an every fired for."""
    pks = [record.pk for record in records]
    fired, waiting = [], []
    attempts = _attempts(model, work, pks, now, db)
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


def _move_due(model: Any, work: Work, pks: list[Any], now: datetime, db: str) -> list[Any]:
    """A transition timeout moves its due records with one UPDATE, each re-checked locked."""
    changes = entry_changes(model.workflow, work.transition_to, now)
    event = Event(work.step, work.transition_to, work.entity, Trigger.TIMEOUT)
    state = model.workflow.state_attribute
    with transaction.atomic(using=db):
        claim = model.workflow.queryset(db).filter(pk__in=pks, **{state: work.step})
        locked = claim.select_for_update(skip_locked=True)
        instants = {record.pk: due_at(work, record, now) for record in locked}
        due = [pk for pk, at in instants.items() if at is not None and at <= now]
        if not due:
            return []
        rows = model._base_manager.using(db).filter(pk__in=due)
        moved = list(move_many(model, rows, changes, event, db))
        meters.fired(model, [instants[pk] for pk in moved], db)
        return moved


def _report(model: Any, work: Work, fired: list[Any]) -> None:
    """The one INFO line of a run that fired: which records, by key."""
    if fired:
        logger.info("%s: %s fired for %s", model._meta.label, work.name, named(fired))
        work_fired.send(sender=model, work=work.name, count=len(fired))


def named(pks: list[Any], limit: int = NAMED_IN_LOG) -> str:
    """``#3, #7``; past ``limit`` keys, ``#1, …, #10 and 490 more``."""
    shown = ", ".join(f"#{pk}" for pk in pks[:limit])
    return shown if len(pks) <= limit else f"{shown} and {len(pks) - limit} more"


def _matching(model: Any, work: Work, now: datetime, db: str, skip: set[Any]) -> Any:
    rows = probes.matching(model, work, now, db)
    return rows.exclude(pk__in=skip) if skip else rows


def _batches(model: Any, work: Work, now: datetime, db: str, batch_size: int, skip: set[Any]):
    """Keys of matching records, a batch at a time, until none are left or the worker stops."""
    while not stopping.requested():
        pks = list(_matching(model, work, now, db, skip).values_list("pk", flat=True)[:batch_size])
        yield pks
        if len(pks) < batch_size:
            return


@traces.unit_of_work
def _run_steps(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> list[Any]:
    moved, skip = [], set()
    for pks in _batches(model, work, now, db, batch_size, skip):
        for pk in pks:
            with turn(db):
                target = run_step(model, pk, work.step, now=now)
            if target is None:
                skip.add(pk)
            else:
                moved.append(pk)
    return moved


@traces.unit_of_work
def _run_transitions(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> list[Any]:
    """Transition timeouts move whole batches with one UPDATE."""
    changes = entry_changes(model.workflow, work.transition_to, now)
    event = Event(work.step, work.transition_to, work.entity, Trigger.TIMEOUT)
    fired, skip = [], set()
    while not stopping.requested():
        with turn(db), transaction.atomic(using=db):
            claim = _matching(model, work, now, db, skip).select_for_update(skip_locked=True)
            claim = claim[:batch_size]
            if work.exact:
                claimed = moved = move_many(model, claim, changes, event, db)
            else:  # business days: the query is a pre-filter, due_at decides
                records = list(claim)
                claimed = [record.pk for record in records]
                due = [record.pk for record in records if _is_due(work, record, now)]
                skip.update(set(claimed) - set(due))
                rows = model._base_manager.using(db).filter(pk__in=due)
                moved = move_many(model, rows, changes, event, db) if due else []
        fired.extend(moved)
        if len(claimed) < batch_size:
            break
    return fired


def _is_due(work: Work, record: Any, now: datetime) -> bool:
    due = due_at(work, record, now)
    return due is not None and due <= now


@traces.unit_of_work
def _run_actions(model: Any, work: Work, now: datetime, db: str, batch_size: int) -> list[Any]:
    """Action timeouts and every: each record in a transaction of its own."""
    fired, skip = [], set()
    for pks in _batches(model, work, now, db, batch_size, skip):
        attempts = _attempts(model, work, pks, now, db)
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


def _attempts(model: Any, work: Work, pks: list[Any], now: datetime, db: str) -> dict[Any, Any]:
    """The attempt rows of this round for a batch (rare: only after failures)."""
    found = attempts_read.rows(model, db).filter(
        work=work.name, object_id__in=[str(pk) for pk in pks]
    )
    if not found.exists():
        return {}
    records = model.workflow.queryset(db).in_bulk(pks)
    rounds = {pk: due_at(work, record, now) for pk, record in records.items()}
    return attempts_read.current(model, work, {pk: due for pk, due in rounds.items() if due}, db)


MAX_PASSES = 50


def run_due_work(now: datetime | None = None) -> dict[str, int]:
    """Run every Work due at ``now`` (default: the current, possibly travelled, time).

    Passes repeat until nothing more fires, so chains of automatic steps and
    timeouts that lead into them finish. Returns how many records each work fired.
    """
    fired: dict[str, int] = {}
    for _ in range(MAX_PASSES):
        this_pass = 0
        for model in workflow_models():
            for work in model.workflow.works:
                count = run_work(model, work.name, now=now)
                if count:
                    key = f"{model._meta.label}:{work.name}"
                    fired[key] = fired.get(key, 0) + count
                    this_pass += count
        if not this_pass:
            return fired
    raise RuntimeError(f"work was still firing after {MAX_PASSES} passes")
