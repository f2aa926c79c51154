"""Helpers for tests that travel in time (with ``time_machine``).

``run_due_work()`` fires everything due now, as the worker would, but in
the calling thread; ``advance_to_next_deadline(record)`` moves the active
time-machine clock to the record's next deadline and fires it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .engine.firing import MAX_PASSES as MAX_PASSES
from .engine.firing import run_due_work as run_due_work


def advance_to_next_deadline(record: Any, clock: Any = None) -> datetime | None:
    """Move the clock to ``record``'s next deadline, run due work and reload the record.

    ``clock`` is anything with ``move_to`` (the ``time_machine`` fixture, or what
    ``time_machine.travel(...).start()`` returns); by default the innermost active
    travel. The record is read again first, so a deadline that fired since it was
    loaded is not taken for the next. Returns the deadline's instant, or ``None`` when
    nothing is pending.
    """
    record.refresh_from_db()
    pending = record.workflow.pending_deadlines()
    if not pending:
        return None
    due = pending[0].due_at
    (clock or _active_clock()).move_to(due)
    run_due_work()
    record.refresh_from_db()
    return due


def _active_clock() -> Any:
    import time_machine

    if not time_machine.traveller_stack:
        raise RuntimeError(
            "advance_to_next_deadline() needs a running time_machine travel: use the "
            "time_machine fixture, `with time_machine.travel(...)`, or pass clock=."
        )
    return time_machine.traveller_stack[-1]
