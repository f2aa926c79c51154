"""The stored due instant, ``next_due_at``: what computes it and what writes it.

Computing lives in ``due_instants`` (a low module), writing in the engine
(``engine.rescheduling``); this module names both, as it always has.
``refresh`` computes and stores the instants of records again after a change
the workflow cannot see (raw SQL, a holidays calendar that changed).
"""

from .engine.rescheduling import catch_up, postpone, reschedule, store
from .work.due_instants import (
    HALTED,
    common_entry_due,
    entering,
    fingerprint,
    moved_by,
    next_due,
    watched,
)
from .work.due_instants import _declared as _declared

#: ``refresh(Model, pks, db)``: the name the docs give ``reschedule``.
refresh = reschedule

__all__ = [
    "HALTED",
    "catch_up",
    "common_entry_due",
    "entering",
    "fingerprint",
    "moved_by",
    "next_due",
    "postpone",
    "refresh",
    "reschedule",
    "store",
    "watched",
]
