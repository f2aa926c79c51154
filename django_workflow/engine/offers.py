"""What a record offers an actor now: the transitions of its step the actor may call.

One answer for every place a person acts — the admin's buttons, the template tags'
forms — so a rule the engine adds to ``permits`` (a policy, a ``when``, a vote cast)
reaches all of them. Imports the compiled workflow only; the engine inside the call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model.versions import workflow_of


def offered(
    record: Any, actor: Any, values_for: Callable[[Any], dict[str, Any]] | None = None
) -> list[Any]:
    """The declared transitions of ``record``'s step that ``actor`` may call now, in
    declaration order; ``values_for(transition)`` gives the accepted values the caller
    fills in itself (policies and ``when`` see them)."""
    from . import permits  # the runtime, loaded by a request, not on import

    transitions = workflow_of(record).transitions_in(record.workflow.current_step)
    return [
        t for t in transitions if permits(record, t, actor, values_for(t) if values_for else {})
    ]
