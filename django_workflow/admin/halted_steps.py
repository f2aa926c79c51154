"""An automatic step's attempts as the admin shows them: the record's attempt row, when
it really runs again, and "retry now" for a halted one.

Reads through ``attempts_read``; the retry's write is the engine's (``retry_halted``),
imported where it runs, and the queueing is the transport's.
"""

from __future__ import annotations

from typing import Any

from django.db import router

from ..model.versions import workflow_of
from ..reading import attempts_read
from ..work import names
from ..worker.transport import enqueue_step


def attempt_row(record: Any) -> Any:
    """The attempt row of the automatic step ``record`` is in, if any."""
    work = workflow_of(record).own_work(names.step_work(record.workflow.current_step))
    db = record._state.db or router.db_for_write(type(record), instance=record)
    return (
        attempts_read.rows(type(record), db)
        .filter(object_id=str(record.pk), work=work.name)
        .first()
    )


def next_attempt_at(record: Any, row: Any) -> Any:
    """When the backing-off automatic step of ``record`` really runs again: with the
    first poll from its ``retry_at``; ``None`` when it is not waiting for a retry."""
    if row is None or row.halted or row.retry_at is None:
        return None
    work = workflow_of(record).own_work(names.step_work(record.workflow.current_step))
    return attempts_read.runs_at(workflow_of(record), work, row.retry_at)


def retry_now(record: Any) -> bool:
    """A halted automatic step gets a fresh budget and is queued; ``False`` if not halted."""
    from ..engine import retry_halted

    if not retry_halted(record):
        return False
    model = type(record)
    enqueue_step(model._meta.label, record.pk, record.workflow.current_step, model.workflow.queue)
    return True
