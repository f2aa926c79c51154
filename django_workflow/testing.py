"""Helpers for tests that travel in time (with ``time_machine``).

``run_due_work()`` fires everything due now, as the worker would, but in
the calling thread; ``advance_to_next_deadline(record)`` moves the active
time-machine clock to the record's next deadline and fires it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .engine.firing import run_work
from .registry import workflow_models

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


def advance_to_next_deadline(record: Any, clock: Any = None) -> datetime | None:
    """Move the clock to ``record``'s next deadline, run due work and reload the record.

    ``clock`` is anything with ``move_to`` (the ``time_machine`` fixture, or what
    ``time_machine.travel(...).start()`` returns); by default the innermost active
    travel. Returns the deadline's instant, or ``None`` when nothing is pending.
    """
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
