"""What happens to records: the event the engine writes, logs and announces.

A low module: the log model, the engine and the signals all read it, and it
imports nothing of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import models


class Trigger(models.TextChoices):
    """Why a log row was written; ``TransitionLog.Trigger`` is this enum."""

    INITIAL = "initial"
    MANUAL = "manual"
    AUTOMATIC = "automatic"
    TIMEOUT = "timeout"
    ERROR_PATH = "error_path"
    UNDO = "undo"
    FAILED = "failed"
    HALTED = "halted"
    MIGRATION = "migration"


class WorkKind(models.TextChoices):
    """What a unit of work runs."""

    STEP = "step"
    TIMEOUT = "timeout"
    EVERY = "every"


@dataclass(frozen=True)
class Event:
    """One thing that happened to a record, as the log and the signal describe it."""

    from_state: str
    to_state: str
    name: str
    trigger: Trigger
    actor: Any = None
    error: BaseException | None = None
    attempt: int | None = None
    reverses: Any = None  # the log row an undo reverses
    comment: str = ""
    data: Any = None
    #: When the record had entered ``from_state``: the start of the stay this event
    #: ends (a move) or happens in (in place).
    from_state_entered_at: Any = None
