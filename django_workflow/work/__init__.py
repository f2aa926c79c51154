"""Units of scheduled work: what every automatic step, timeout and every compiles to.

One class per kind, each owning its ``match``, ``due_at`` and how it runs:
``step`` (an automatic step, and a step's ``on_enter``), ``timeout`` (one
that moves, one that acts), ``every``, ``join`` (the re-check of a join step),
``release`` (a claim held too long), ``sla`` (a service-level clock's warning or breach).
``names`` builds and reads their names.
"""

from .base import Deadline, Duration, Work
from .compiling import compile_works, counts_firings, soonest_at_entry
from .every import EveryWork
from .join import JoinRecheck
from .release import ReleaseWork
from .sla import SlaAlarm
from .step import EntryWork, StepWork
from .timeout import ActionTimeout, Deadlined, TimeoutWork, TransitionTimeout

__all__ = [
    "ActionTimeout",
    "Deadline",
    "Deadlined",
    "Duration",
    "EntryWork",
    "EveryWork",
    "JoinRecheck",
    "ReleaseWork",
    "SlaAlarm",
    "StepWork",
    "TimeoutWork",
    "TransitionTimeout",
    "Work",
    "compile_works",
    "counts_firings",
    "soonest_at_entry",
]
