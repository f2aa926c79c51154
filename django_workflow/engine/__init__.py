"""The engine: the only writer of a workflow's columns, its due instants and its attempts.

Every step change (manual, automatic, error path, timeout, undo, creation)
and every firing goes through here. A change is one database transaction:
the new step is written only if the row still holds what the caller saw, the
instance takes the new values, the log row is written beside it, and the
signal and any follow-up work go out after commit.

Rooms: ``moves`` writes a step change and announces it; ``routes`` chooses
where an automatic step or a conditional transition leads; ``manual`` decides
and runs a person's transition; ``votes`` counts the votes of ``quorum``
transitions; ``saving`` is ``save()`` and creation; ``steps`` runs automatic
steps, the records table as their queue; ``running`` spends failed attempts and
fires an action; ``firing`` hands a work to the engine of its kind (``kind_engines``:
``steps``, ``effects``, ``timeouts``, ``timed_actions``, ``join_rechecks``, ``claims``,
``sla_firing``), which pick their records with ``picking``;
``attempts`` writes attempt rows, ``rescheduling`` the stored due instants,
``owed_effects`` the effects an entry owes, and ``effects`` runs them;
``recovery`` brings back what a dead worker held.
``cascades`` moves a parent's children with it (``Transition(cascade=...)``);
``joins`` moves a parent on once its children are done (``Join``), and
``join_rechecks`` is the worker's re-check of the parents still waiting.
``receiving`` stores events delivered from outside and applies them (``Workflow.events``);
``buffering`` applies the buffered ones when their record can take them.
``claims`` writes who holds a record (claim, release, assign) and the holder rule of
``Step(claim=True)``; every move leaving a step clears the holder (``claims_read.leaving``).
"""

from ..errors import error_summary, error_text
from . import (
    buffering,  # noqa: F401  (registers buffered events after every move)
    joins,  # noqa: F401  (registers its evaluation after every move)
)
from .attempts import retry_halted
from .manual import Decision, available, decide, permits, run_transition
from .moves import database, entry_changes, log_event, move, move_many
from .rescheduling import reschedule
from .running import ACTION_FAILURES, attempt_failed, fire
from .saving import create_record, records_created, save_record, starting
from .steps import run_step

__all__ = [
    "ACTION_FAILURES",
    "Decision",
    "attempt_failed",
    "available",
    "create_record",
    "database",
    "decide",
    "entry_changes",
    "error_summary",
    "error_text",
    "fire",
    "log_event",
    "move",
    "move_many",
    "permits",
    "records_created",
    "reschedule",
    "retry_halted",
    "run_step",
    "run_transition",
    "save_record",
    "starting",
]
