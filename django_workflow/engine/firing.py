"""Running a unit of work: hand it to its kind's engine, or walk the stored due instants.

A deadline is found through ``next_due_at``: the records whose stored instant
has passed, soonest first, a batch at a time; ``due_at`` says which of their
deadlines are due and each kind's engine (``kind_engines``) fires its own.
Automatic steps, entry effects and deadlines the project schedules itself
find their own records.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import router
from django.utils import timezone

from ..model.columns import NEXT_DUE_AT
from ..model.registry import workflow_models
from ..model.versions import workflow_of
from ..process import stopping, traces
from ..work import Work
from . import (  # noqa: F401  (each registers the engine of its kind)
    claims,
    effects,
    join_rechecks,
    sla_firing,
    steps,
    timed_actions,
    timeouts,
)
from .kind_engines import engine_for
from .picking import BATCH_SIZE, Picking, named, report
from .rescheduling import reschedule
from .sql import probes

__all__ = ["BATCH_SIZE", "MAX_PASSES", "due_rows", "named", "run_due", "run_due_work", "run_work"]


def run_work(
    model: Any, work_name: str, *, now: datetime | None = None, batch_size: int = BATCH_SIZE
) -> int:
    """Fire ``work_name`` for every record of ``model`` due at ``now``; return how many fired."""
    work = model.workflow.work(work_name)
    engine = engine_for(work)
    now = now or timezone.now()
    if engine.fire is None or work.self_scheduled:
        if engine.run_alone is None:
            raise LookupError(f"{work.name} is a deadline only the due instants find")
        return engine.run_alone(Picking(model, now, batch_size), work)
    return run_due(model, [work], now=now, batch_size=batch_size)[work.name]


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
    picking = Picking(model, now, batch_size)
    after = None
    while not stopping.requested():
        batch = list(due_rows(model, now, db, after)[:batch_size])
        if not batch:
            break
        after = (getattr(batch[-1], NEXT_DUE_AT), batch[-1].pk)
        plan, idle = _plan(picking, batch)
        for work, records in plan.items():
            if work.name in wanted:
                fired[work.name] += _fire(picking, work, records)
        if idle:
            reschedule(model, [record.pk for record in idle], db, now)
        if len(batch) < batch_size:
            break
    for work in works:
        report(model, work, fired[work.name])
    return {name: len(pks) for name, pks in fired.items()}


@traces.unit_of_work
def _fire(picking: Picking, work: Work, records: list[Any]) -> list[Any]:
    fire = engine_for(work).fire
    if fire is None:
        raise LookupError(f"{work.name} has a stored instant but no engine fires it")
    return fire(picking, work, records)


def due_rows(model: Any, now: datetime, db: str, after: Any = None) -> Any:
    """Records due at ``now``, soonest first, after the ``(due, pk)`` of the last batch."""
    rows = model.workflow.queryset(db).filter(**{f"{NEXT_DUE_AT}__lte": now})
    if after is not None:
        due, pk = after
        rows = rows.filter(**{f"{NEXT_DUE_AT}__gte": due}).exclude(
            **{NEXT_DUE_AT: due, "pk__lte": pk}
        )  # one range of the index, walked in its order
    return rows.order_by(NEXT_DUE_AT, "pk")


def _plan(picking: Picking, batch: list[Any]) -> tuple[dict[Work, list[Any]], list[Any]]:
    """Which records each work fires for; and the records with nothing due after all."""
    state = picking.model.workflow.state_attribute
    plan: dict[Work, list[Any]] = {}
    idle = []
    for record in batch:
        works = workflow_of(record).deadline_works.get(getattr(record, state), ())
        due = [work for work in works if picking.is_due(work, record)]
        for work in due:
            plan.setdefault(work, []).append(record)
        if not due:
            idle.append(record)
    return plan, idle


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
            for work in model.workflow.all_works:
                count = run_work(model, work.name, now=now)
                if count:
                    key = f"{model._meta.label}:{work.name}"
                    fired[key] = fired.get(key, 0) + count
                    this_pass += count
        if not this_pass:
            return fired
    raise RuntimeError(f"work was still firing after {MAX_PASSES} passes")
