"""What happens to records: the event the engine writes, logs and announces.

A low module: the log model, the engine and the signals all read it, and it
imports nothing of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _


class Trigger(models.TextChoices):
    """Why a log row was written; ``TransitionLog.Trigger`` is this enum."""

    # The labels are what people read (the admin's history and log); rows store the values.
    INITIAL = "initial", _("created")
    MANUAL = "manual", _("by a person")
    AUTOMATIC = "automatic", _("by the worker")
    TIMEOUT = "timeout", _("deadline")
    ERROR_PATH = "error_path", _("error path")
    UNDO = "undo", _("undo")
    FAILED = "failed", _("attempt failed")
    HALTED = "halted", _("halted")
    MIGRATION = "migration", _("data migration")
    #: A vote for a ``quorum`` transition, or its retraction (``data`` says so); no move.
    VOTE = "vote", _("vote")
    #: A child moved by its parent's ``Transition(cascade=...)``.
    CASCADE = "cascade", _("cascade")
    #: A parent leaving a ``Join`` step: its children are done (``data`` names the last).
    JOIN = "join", _("join")
    #: A record claimed, released (by a person or after ``release_after``) or assigned;
    #: ``data`` names the assignee. No move.
    ASSIGNMENT = "assignment", _("assignment")
    #: An event from outside (``Workflow.events``); ``data`` names the event and its id.
    EVENT = "event", _("event from outside")
    #: A record moved to another version of its declaration (``data``: ``from_version``,
    #: ``to_version``); its step changes only where the upgrade maps it elsewhere.
    UPGRADE = "upgrade", _("version upgrade")


class Outcome(models.TextChoices):
    """What became of an event delivered from outside (``django_workflow.deliver``)."""

    APPLIED = "applied", _("applied")
    #: Kept until its record can take it (``Receive(buffer=...)``).
    BUFFERED = "buffered", _("buffered")
    #: The same event and id came before; nothing changed.
    DUPLICATE = "duplicate", _("duplicate")
    #: The record is not in a step offering the transition, and nothing is buffered.
    IGNORED = "ignored", _("ignored")
    #: Its ``seq`` is not above the highest applied for that event and record.
    STALE = "stale", _("stale")
    #: No record holds its key, and nothing is buffered.
    UNMATCHED = "unmatched", _("unmatched")
    #: Buffered, but its buffer ran out before the record could take it.
    EXPIRED = "expired", _("expired")


class WorkKind(models.TextChoices):
    """What a unit of work runs."""

    STEP = "step"
    TIMEOUT = "timeout"
    EVERY = "every"
    #: A step's ``on_enter``: owed once per entry (a ``PendingEffect`` row), not a deadline.
    EFFECT = "effect"
    #: A parent waiting in a ``Join`` step, re-checked by the worker.
    JOIN = "join"
    #: ``Step(claim=True, release_after=...)``: a claim held too long, let go.
    RELEASE = "release"
    #: A service-level clock's warning or breach (``Workflow.slas``).
    SLA = "sla"


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
    #: The holder a delegate acted for (an active ``Absence``), when not the actor itself.
    on_behalf_of: Any = None


class PendingKind(StrEnum):
    """What a pending deadline does when it falls due (``PendingDeadline.kind``)."""

    #: Runs an action; the record stays.
    ACTION = "action"
    #: Moves the record.
    TRANSITION = "transition"
    #: Runs an action again and again while the record stays.
    EVERY = "every"
    #: Warns of, or marks, a service-level clock's breach.
    SLA = "sla"
