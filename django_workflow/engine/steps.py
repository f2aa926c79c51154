"""Automatic steps: the records table is the queue, one record per transaction.

``run_steps`` takes the records waiting in one automatic step a chunk at a
time (their keys and entry instants, and any attempt rows they have) and runs
each: its attempt is marked running in one committed ``INSERT`` whose unique
key is the claim (a record another run took meanwhile is left to it), then one
transaction locks the record in the entry it was read in, runs the action,
writes the move and its log row, and forgets the attempt. It goes on until no
record is left or its time budget ends. ``run_step`` runs one record the same way.

An attempt row already there (a retry, an interrupted attempt, another round)
takes ``attempts.start_attempt``'s full path. A failure spends the attempt
(``running.attempt_failed``); a stop or a crash spends nothing.

A run is queued per (model, step): ``want_run`` takes the step's queued mark,
which the run drops when it finds nothing left, so an entry queues at most one
run that is not already queued or running.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import datetime, timedelta
from typing import Any

from django.db import router, transaction
from django.utils import timezone

from ..conf import workflow_settings
from ..errors import NoRouteMatched
from ..model.columns import STATE_ENTERED_AT
from ..model.compiled import CompiledWorkflow
from ..model.triggers import Event, Trigger
from ..model.versions import version_column, version_workflow, workflow_of
from ..process import meters, stopping, traces
from ..process.pacing import turn
from ..reading import attempts_read
from ..work import StepWork, Work, names
from . import attempts
from .action_saves import collecting, saved_by
from .kind_engines import KindEngine, register
from .moves import entry_changes, move_locked
from .picking import Picking
from .routes import choose_route
from .running import ACTION_FAILURES, attempt_failed
from .sql import probes, step_statements
from .time_limits import time_limited

logger = logging.getLogger("django_workflow.engine")

#: Seconds a run takes new records for before it queues a follow-up.
BUDGET = 5.0
#: Records read per query.
CHUNK = 100
#: The attempt row is not known: try the first attempt, and take the full path if taken.
UNKNOWN = object()


def run_steps(model: Any, step: str, *, budget: float = BUDGET) -> tuple[int, bool]:
    """Run the records waiting in automatic step ``step`` until none is left, the worker
    stops or ``budget`` seconds have passed: (how many moved on, whether some may be left).
    On a model with versions, the records of each version that runs ``step`` automatically."""
    ends = time.monotonic() + budget
    moved = 0
    for work in works_of(model, step):
        count, left = _run_waiting(model, work, ends)
        moved += count
        if left:
            return moved, True
    return moved, False


def _run_waiting(model: Any, work: Work, ends: float) -> tuple[int, bool]:
    db = router.db_for_write(model)
    moved, skip = 0, set()
    while True:
        now = timezone.now()
        rows = probes.matching(model, work, now, db)
        if skip:
            rows = rows.exclude(pk__in=skip)
        chunk = list(rows.values_list("pk", STATE_ENTERED_AT)[:CHUNK])
        if not chunk:
            return moved, False
        random.shuffle(chunk)  # runs beside each other start apart
        attempts = _attempt_rows(model, work, [pk for pk, _ in chunk], db)
        for pk, entered in chunk:
            if stopping.requested() or time.monotonic() >= ends:
                return moved, True
            row = attempts.get(str(pk))
            if row is not None and row.round_key == entered and attempts_read.waiting(row, now):
                skip.add(pk)
                continue
            with turn(db):
                target = _run_entry(model, work, pk, entered, row, timezone.now(), db)
            if target is None:  # taken by another run, waiting for a retry, halted
                skip.add(pk)
            else:
                moved += 1


def run_step(model: Any, pk: Any, step: str, *, now: datetime | None = None) -> str | None:
    """Run automatic step ``step`` for the record ``pk`` if it is still there.

    The attempt is marked running first, committed. Then the action, the route
    it leads to and the new step commit together. An exception, a route miss
    or the time limit rolls the action back and spends the attempt: it is
    retried per the step's ``Retry``, and when the attempts run out the record
    takes ``on_error`` or stays, halted. A stop or a crash spends nothing: the
    attempt is released and runs again. Returns the step the record moved to,
    or ``None`` when it did not move.
    """
    db = router.db_for_write(model)
    rows = model._base_manager.using(db).filter(pk=pk, **{model.workflow.state_attribute: step})
    record = rows.only(STATE_ENTERED_AT, *version_column(model)).first()
    work = _work(workflow_of(record), step) if record is not None else None
    if work is None:  # moved on, or gone, since it was queued; or not automatic there
        return None
    entered = getattr(record, STATE_ENTERED_AT)
    return _run_entry(model, work, pk, entered, UNKNOWN, now or timezone.now(), db)


def works_of(model: Any, step: str) -> list[Work]:
    """The automatic step ``step`` of each version that declares it so."""
    return [w for version in model.workflow.family() if (w := _work(version, step)) is not None]


def _work(workflow: CompiledWorkflow, step: str) -> Work | None:
    declared = workflow.steps.get(step)
    if declared is None or not declared.is_automatic:
        return None
    return workflow.own_work(names.step_work(step))


def _attempt_rows(model: Any, work: Work, pks: list[Any], db: str) -> dict[str, Any]:
    found = attempts_read.rows(model, db).filter(
        work=work.name, object_id__in=[str(pk) for pk in pks]
    )
    return {row.object_id: row for row in found}


def _run_entry(
    model: Any, work: Work, pk: Any, entered: datetime, row: Any, now: datetime, db: str
) -> str | None:
    """Claim the attempt and run it; the step the record moved to."""
    claim = _claim(model, work, pk, entered, row, now, db)
    if claim is None:
        return None
    settled = False
    try:
        if claim.failure is not None:  # interrupted too often, or past its time limit
            target = _fail_attempt(model, work, pk, entered, claim.number, claim.failure, db)
        else:
            target = _run_action(model, work, pk, entered, claim.number, db)
        settled = True
        return target
    finally:
        if not settled:  # stopped, or the failure could not be recorded: not spent
            _release(model, pk, work, db)


def _claim(
    model: Any, work: Work, pk: Any, entered: datetime, row: Any, now: datetime, db: str
) -> attempts.Claim | None:
    """The attempt to make now, marked running; ``None`` when none may start."""
    if row is None or row is UNKNOWN:
        if step_statements.start_first_attempt(model, pk, work, entered, timezone.now(), db):
            return attempts.Claim(1)
        if row is None:  # another run took it since the chunk was read
            return None
    return attempts.start_attempt(model, pk, work, entered, now, db)


def _run_action(
    model: Any, work: Work, pk: Any, entered: datetime, attempt: int, db: str
) -> str | None:
    """The action, the route and the move in one transaction; a failure spends the attempt."""
    step = work.step
    workflow: CompiledWorkflow = version_workflow(model, work.version)
    try:
        with transaction.atomic(using=db):
            record = step_statements.locked_entry(model, step, pk, entered, db)
            if record is None or not work.runs_for(record):  # moved on, or upgraded, meanwhile
                step_statements.delete_attempt(model, str(pk), work.name, db)
                return None
            with collecting(record):
                span = traces.action(record, work, Trigger.AUTOMATIC, attempt)
                with time_limited(work.time_limit), span:
                    getattr(record, work.action)()
                target = choose_route(workflow.steps[step].routes, record, db)
                if target is None:
                    raise NoRouteMatched(record, work.action, step)
                saved = saved_by(record)
            event = Event(
                step, target, work.action, Trigger.AUTOMATIC, attempt=attempt,
                from_state_entered_at=entered,
            )  # fmt: skip
            changes = {**saved, **entry_changes(workflow, target, timezone.now())}
            forget = step_statements.forgetting(model, str(pk), work.name, db)
            move_locked(record, changes, event, forget)  # the attempt's row goes with the move
            meters.attempted(model, work.name, meters.Outcome.SUCCEEDED, db)
        return target
    except ACTION_FAILURES as error:
        return _fail_attempt(model, work, pk, entered, attempt, error, db)


def _release(model: Any, pk: Any, work: Work, db: str) -> None:
    try:
        attempts.release(model, pk, work, db)
    except Exception:  # the heartbeat expires it in time all the same
        logger.exception("%s %s: could not release %s", model._meta.label, pk, work.name)


def _fail_attempt(
    model: Any,
    work: Work,
    pk: Any,
    entered: datetime,
    attempt: int,
    error: BaseException,
    db: str,
) -> str | None:
    rows = model._base_manager.using(db).filter(
        pk=pk, **{work.state_attribute: work.step, STATE_ENTERED_AT: entered}
    )
    with transaction.atomic(using=db):
        record = rows.select_for_update().first()  # as stored, without the action's changes
        if record is None:
            attempts.forget(model, pk, work, db)
            return None
        return attempt_failed(record, work, attempt, error, db)


# Queueing one run per step -------------------------------------------------------------


def _lease() -> timedelta:
    return timedelta(seconds=workflow_settings.RECOVERY_AFTER)


def want_run(model: Any, step: str) -> bool:
    """Whether the caller should queue a run of ``step``: ``True`` once until the run it
    queues finds nothing left (or its mark's lease of ``RECOVERY_AFTER`` runs out)."""
    db = router.db_for_write(model)
    return step_statements.queue_mark(model, step, timezone.now(), _lease(), db)


def queued_anyway(model: Any, step: str) -> None:
    """A run of ``step`` is queued whoever held the mark (the poll, a run's follow-up)."""
    db = router.db_for_write(model)
    step_statements.renew_mark(model, step, timezone.now(), _lease(), db)


def not_queued(model: Any, step: str) -> None:
    """The run the caller meant to queue was not queued: give the mark back."""
    step_statements.drop_mark(model, step, router.db_for_write(model))


def run_queued(model: Any, step: str) -> tuple[int, bool]:
    """The queued run of ``step``: run what waits; when nothing is left, drop the mark
    and look once more (an entry that found the mark held before it was dropped was not
    queued). Returns (how many moved on, whether a follow-up must be queued)."""
    moved, more = run_steps(model, step)
    if more:
        queued_anyway(model, step)
        return moved, True
    not_queued(model, step)
    again, more = run_steps(model, step)
    return moved + again, more and want_run(model, step)


@traces.unit_of_work
def run_matching(picking: Picking, work: Work) -> list[Any]:
    """The poll's safety net: every record waiting in the step, one at a time."""
    moved: list[Any] = []
    skip: set[Any] = set()
    for pks in picking.batches(work, skip):
        for pk in pks:
            with turn(picking.db):
                target = run_step(picking.model, pk, work.step, now=picking.now)
            if target is None:
                skip.add(pk)
            else:
                moved.append(pk)
    return moved


register(StepWork, KindEngine(run_alone=lambda picking, work: picking.picked(work, run_matching)))
