"""Work names: built and read here alone.

A name is a durable key (attempt rows, Schedules and log lines carry it):
``step:<step>`` for an automatic step, ``enter:<step>`` for a step's
``on_enter``, ``timeout:<step>.<name>`` and ``every:<step>.<name>`` for the
deadlines, ``join:<step>`` for the re-check of parents waiting in a join step,
``release:<step>`` for a claim step's ``release_after``, ``sla:<step>.<sla>.warn`` and
``sla:<step>.<sla>.breach`` for a service-level clock running in a step. The works of
a versioned workflow's version 2 and later end in ``@v<version>`` (``step:check@v2``):
version 1 keeps the names it had before the model had versions.
"""

from __future__ import annotations

#: How an automatic step's work name begins.
STEP_PREFIX = "step:"
ENTRY_PREFIX = "enter:"
#: How the works of a version after the first end: ``@v2``.
VERSION_MARK = "@v"


def versioned(name: str, version: int) -> str:
    """The name of a work of ``version``: version 1's keep their plain names."""
    return name if version == 1 else f"{name}{VERSION_MARK}{version}"


def unversioned(name: str) -> str:
    """The name without its version mark."""
    base, mark, version = name.rpartition(VERSION_MARK)
    return base if mark and version.isdigit() else name


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
    if not name.startswith(STEP_PREFIX):
        return None
    return unversioned(name).removeprefix(STEP_PREFIX)
