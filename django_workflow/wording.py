"""How the log and the clock read to people: a log row's transition and trigger in
words, and the name of a time zone.

The log stores names (``make_offer``, ``sla_warning``, ``error_path``) so that it
survives a relabelling; these helpers turn them into the labels the declaration
gives, at the moment they are shown. Nothing here writes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.utils import timezone
from django.utils.translation import gettext as _

from .columns import ON_ENTER
from .declaration import humanise
from .events import Trigger

#: Rows whose name is a deadline's (a timeout's or an every's) when the step declares one.
_DEADLINE_OR_STEP = (Trigger.TIMEOUT, Trigger.FAILED, Trigger.HALTED, Trigger.ERROR_PATH)


def trigger_words(row: Any) -> str:
    """What set a log row off, in words: "by the worker", "error path"; an ``on_enter``
    effect's row (stored as a firing) reads "on entry", not "deadline". A value this
    release does not know reads as stored."""
    if row.triggered_by == Trigger.TIMEOUT and row.transition_name == ON_ENTER:
        return _("on entry")
    try:
        return str(Trigger(row.triggered_by).label)
    except ValueError:
        return row.triggered_by


def row_label(workflow: Any, row: Any) -> str:
    """What a log row did, as people read it: the transition's label (a vote's too), the
    deadline's, the automatic step's, "Undo of “Reject”", "Vote for “Approve” withdrawn";
    empty for a creation or a data migration.

    ``workflow`` is ``None`` for a model that no longer declares one: names humanised.
    An undo row reads its chain from ``row.reverses`` (load ``reverses__reverses``).
    """
    name, trigger = row.transition_name, row.triggered_by
    reversal = row.reversal()
    if reversal is not None:
        done, undone = reversal
        label = workflow.transition_label(undone) if workflow else humanise(undone)
        words = _("Undo of “%(label)s”") if done == "undo" else _("Redo of “%(label)s”")
        return words % {"label": label}
    if not name:
        return ""
    if workflow is None:
        return humanise(name)
    if trigger == Trigger.VOTE and row.data == {"retract": True}:
        label = workflow.transition_label(name, row.from_state)
        return _("Vote for “%(label)s” withdrawn") % {"label": label}
    if trigger in (Trigger.MANUAL, Trigger.VOTE, Trigger.CASCADE):
        return str(workflow.transition_label(name, row.from_state))
    if trigger in _DEADLINE_OR_STEP and _declares_deadline(workflow, row.from_state, name):
        return str(workflow.deadline_label(row.from_state, name))
    if name in workflow.steps:  # an automatic step's failure: its entity is the step
        return str(workflow.step_label(name))
    return humanise(name)  # an automatic step's action, or an undo without its row


def _declares_deadline(workflow: Any, step_name: str, name: str) -> bool:
    step = workflow.steps.get(step_name)
    return step is not None and any(d.name == name for d in step.deadlines)


def step_words(workflow: Any, name: str) -> str:
    """A step's label (its name humanised for a model that no longer declares one)."""
    if not name:
        return ""
    return str(workflow.step_label(name)) if workflow is not None else humanise(name)


def zone_name(zone: ZoneInfo, now: datetime | None = None) -> str:
    """``"Europe/Zagreb (CET)"``; ``"UTC"`` where the abbreviation is the name itself."""
    abbreviation = (now or timezone.now()).astimezone(zone).tzname()
    return zone.key if abbreviation == zone.key else f"{zone.key} ({abbreviation})"


def times_in(zone: ZoneInfo, now: datetime | None = None) -> str:
    """The sentence that names a screen's zone once: "Times in Europe/Zagreb (CET)."."""
    return _("Times in %(zone)s.") % {"zone": zone_name(zone, now)}
