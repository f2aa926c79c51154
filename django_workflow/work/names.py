"""Work names: built and read here alone.

A name is a durable key (attempt rows, Schedules and log lines carry it):
``step:<step>`` for an automatic step, ``enter:<step>`` for a step's
``on_enter``, ``timeout:<step>.<name>`` and ``every:<step>.<name>`` for the
deadlines, ``join:<step>`` for the re-check of parents waiting in a join step,
``release:<step>`` for a claim step's ``release_after``, ``sla:<step>.<sla>.warn`` and
``sla:<step>.<sla>.breach`` for a service-level clock running in a step.
"""

from __future__ import annotations

#: How an automatic step's work name begins.
STEP_PREFIX = "step:"
ENTRY_PREFIX = "enter:"


def step_work(step: str) -> str:
    return f"{STEP_PREFIX}{step}"


def entry_work(step: str) -> str:
    return f"{ENTRY_PREFIX}{step}"


def timeout_work(step: str, timeout: str) -> str:
    return f"timeout:{step}.{timeout}"


def every_work(step: str, every: str) -> str:
    return f"every:{step}.{every}"


def join_work(step: str) -> str:
    return f"join:{step}"


def release_work(step: str) -> str:
    return f"release:{step}"


def sla_work(step: str, sla: str, alarm: str) -> str:
    return f"sla:{step}.{sla}.{alarm}"


def automatic_step(name: str) -> str | None:
    """The step an automatic step's work name runs; ``None`` for any other work."""
    return name.removeprefix(STEP_PREFIX) if name.startswith(STEP_PREFIX) else None
