"""Which engine runs each kind of work: the module that owns a kind registers it.

A kind of work (``work/``) says when it is due; how it fires is the
engine's, one module per kind: ``steps`` (automatic steps), ``effects``
(a step's ``on_enter``), ``timeouts`` (a timeout that moves), ``timed_actions``
(a timeout that acts, and ``every``), ``join_rechecks``, ``claims``
(``release_after``) and ``sla_firing``. A new kind adds its class and one
``register`` call; ``firing`` does not change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..work import Work

if TYPE_CHECKING:
    from .picking import Picking


@dataclass(frozen=True)
class KindEngine:
    #: Fire for the records the walk over stored due instants picked; the keys it fired for.
    #: ``None``: the kind is no deadline and finds its own records.
    fire: Callable[[Picking, Work, list[Any]], list[Any]] | None = None
    #: Find the records due now by the kind's own ``match`` and fire them; how many fired.
    #: Automatic steps and entry effects run so, and a deadline the project schedules
    #: itself (``self_scheduled``).
    run_alone: Callable[[Picking, Work], int] | None = None


_ENGINES: dict[type[Work], KindEngine] = {}


def register(kind: type[Work], engine: KindEngine) -> None:
    _ENGINES[kind] = engine


def engine_for(work: Work) -> KindEngine:
    for kind in type(work).__mro__:
        if kind in _ENGINES:
            return _ENGINES[kind]
    raise LookupError(f"no engine is registered for {type(work).__name__} ({work.name!r})")
