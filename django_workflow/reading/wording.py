"""How the log and the clock read to people: a log row's transition and trigger in
words, the name of a time zone, a deadline ("Reminder due Wed 2 Dec 16:00 (in 2 d)")
and a span ("1 d 23 h"), for the admin and the template tags alike.

The log stores names (``make_offer``, ``sla_warning``, ``error_path``) so that it
survives a relabelling; these helpers turn them into the labels the declaration
gives, at the moment they are shown. Nothing here writes.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.utils import dateformat, timezone
from django.utils.translation import gettext as _

from ..declaration import humanise
from ..model.columns import ON_ENTER
from ..model.triggers import Trigger
from ..model.versions import workflow_of
from ..work.record_time import zone_of
from ..work.sla import fired_label
from ..work.sla_clocks_read import in_business_hours

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
    if trigger in (Trigger.MANUAL, Trigger.VOTE, Trigger.CASCADE, Trigger.EVENT):
        return str(workflow.transition_label(name, row.from_state))
    if trigger == Trigger.TIMEOUT and (alarm := _sla_alarm(workflow, row)):
        return fired_label(*alarm)
    if trigger in _DEADLINE_OR_STEP and (
        _declares_deadline(workflow, row.from_state, name) or workflow.sla_alarm(name)
    ):
        return str(workflow.deadline_label(row.from_state, name))
    if name in workflow.steps:  # an automatic step's failure: its entity is the step
        return str(workflow.step_label(name))
    return humanise(name)  # an automatic step's action, or an undo without its row


def _sla_alarm(workflow: Any, row: Any) -> tuple[str, str] | None:
    """The SLA and alarm a fired alarm's row records: named ``resolution.warn`` when it
    ran a method or only marked, or carrying ``{"sla", "alarm"}`` when it moved the
    record by a transition."""
    data = row.data if isinstance(row.data, dict) else {}
    if "sla" in data and "alarm" in data:
        return workflow.sla_alarm(f"{data['sla']}.{data['alarm']}")
    return workflow.sla_alarm(row.transition_name)


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


def describe_deadline(
    deadline: Any, record: Any, now: Any = None, named: bool = True, zone: Any = None
) -> str:
    """``"Reminder due Wed 2 Dec 16:00 CET (in 2 d)"``: the deadline's label, in the
    record's time zone (the workflow's ``time_zone``, or ``time_zone_field``) or in
    ``zone`` when given, with how far away it is; the year too when it is not this year.
    ``named=False`` leaves the zone out, for a screen that names it once. In the active
    language."""
    zone, now = zone or zone_of(record), now or timezone.now()
    due = deadline.due_at.astimezone(zone)
    shape = "D j M H:i" if due.year == now.astimezone(zone).year else "D j M Y H:i"
    when = dateformat.format(due, shape) + (f" {due.tzname()}" if named else "")
    left = deadline.due_at - now
    if left.total_seconds() > 0:
        span_words = _("in %(span)s") % {"span": span(left)}
    else:
        span_words = _("overdue by %(span)s") % {"span": span(-left)}
    label = deadline.label or humanise(deadline.name)
    return _("%(deadline)s due %(when)s (%(span)s)") % {
        "deadline": label,
        "when": when,
        "span": span_words,
    }


def next_deadline(record: Any, now: Any = None, named: bool = True, zone: Any = None) -> Any:
    """The record's soonest pending deadline and its words (``describe_deadline``), as
    the changelist's "next deadline" column and "My work" show it; ``None`` when none."""
    pending = record.workflow.pending_deadlines()
    if not pending:
        return None
    return pending[0], describe_deadline(pending[0], record, now, named=named, zone=zone)


def span(length: timedelta, days: bool = True) -> str:
    """A span in its two largest units: "2 d", "1 d 23 h", "3 h 5 min", "40 s";
    ``days=False`` counts in hours ("30 h"), for working time, whose day is no 24 hours."""
    rest = int(length.total_seconds())
    parts = []
    units = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))
    for unit, size in units if days else units[1:]:
        count, rest = divmod(rest, size)
        if count and len(parts) < 2:
            parts.append(f"{count} {unit}")
        elif parts:
            break
    return " ".join(parts) or "0 s"


def sla_words(clock: Any, working_time: bool = False) -> str:
    """An SLA's clock as the admin shows it: "3 h 10 min left", "paused, 5 h left",
    "breached", "met". ``working_time`` (a target in business hours): what is left in
    working hours, never in days ("24 h left", not "1 d left")."""
    left = span(clock.remaining, days=not working_time)
    if clock.state == "running":
        return f"{left} left"
    if clock.state == "paused":
        return f"paused, {left} left"
    return clock.state


def sla_clocks(record: Any) -> list[dict[str, str]]:
    """Each SLA of the record's workflow in words (``record.sla()``), in declaration order."""
    slas = workflow_of(record).clocked_slas
    return [
        {
            "name": name,
            "label": humanise(name),
            "state": clock.state,
            "text": sla_words(clock, in_business_hours(sla)),
        }
        for name, sla in slas.items()
        for clock in (record.workflow.sla(name),)
    ]
