"""The stored due instant, computed: ``next_due_at``, the soonest pending deadline of the
current step.

It is computed in Python by ``due_at`` — the same arithmetic as the admin
and ``pending_deadlines()`` use, business days, time zones and holidays
included — whenever it can change: on entering a step, when a deadline
fires or fails, when ``save()`` or ``QuerySet.update()`` changes what a
deadline counts from, and when the worker starts after the declaration of
deadlines changed. A poll then asks one index one question, "due ≤ now?",
whatever the deadlines' kinds and however many rows the table has.

This module computes; the engine writes (``engine.rescheduling``).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from dataclasses import fields
from datetime import datetime
from functools import cache
from typing import Any

from django.utils import timezone

from ..model.columns import NEXT_DUE_AT, STATE_ENTERED_AT
from ..model.evaluation import referenced
from ..model.versions import workflow_of
from ..scheduling import due_at

#: ``waits`` value for a deadline whose attempts are spent: it waits for nobody.
HALTED = object()


def next_due(
    record: Any,
    now: datetime | None = None,
    waits: dict[str, Any] | None = None,
    entry: bool = False,
) -> Any:
    """The soonest instant a deadline of ``record``'s current step falls due, or ``None``.

    ``waits`` maps a work's name to the instant its next attempt may start
    (after a failure) or to ``HALTED``. ``entry``: the record has just entered the
    step, so only the deadlines that can come first then are computed.
    """
    workflow = workflow_of(record)
    now = now or timezone.now()
    soonest = None
    declared = workflow.entry_deadline_works if entry else workflow.deadline_works
    for work in declared.get(getattr(record, workflow.state_attribute), ()):
        due = due_at(work, record, now)
        wait = (waits or {}).get(work.name)
        if due is None or wait is HALTED:
            continue
        if wait is not None and wait > due:
            due = wait
        if soonest is None or due < soonest:
            soonest = due
    return soonest


def entering(record: Any, changes: dict[str, Any], now: datetime | None = None) -> Any:
    """``next_due`` of ``record`` once ``changes`` (an entry into a step) are applied."""
    if not workflow_of(record).has_deadlines:
        return None
    future = copy.copy(record)
    for name, value in changes.items():
        setattr(future, name, value)
    return next_due(future, now, entry=_unfired(future))


def _unfired(record: Any) -> bool:
    """Whether none of the current step's action timeouts is marked fired (a move clears
    them; a new record copied from another may carry them)."""
    workflow = workflow_of(record)
    step = getattr(record, workflow.state_attribute)
    return all(getattr(record, name) is None for name in workflow.fired_fields(step))


def common_entry_due(model: Any, step: str, entered_at: datetime) -> tuple[bool, Any]:
    """``(True, due)`` when every record entering ``step`` at ``entered_at`` has the same
    ``next_due_at`` (each deadline counts from the entry, in the workflow's own zone
    and calendar); ``(False, None)`` when it depends on the record."""
    workflow = model.workflow
    for work in workflow.deadline_works.get(step, ()):
        if work.deadline.field != STATE_ENTERED_AT:
            return False, None
        if not work.exact and (workflow.time_zone_field or isinstance(workflow.holidays, str)):
            return False, None
    blank = model(**{workflow.state_attribute: step, STATE_ENTERED_AT: entered_at})
    return True, next_due(blank, entered_at, entry=True)


@cache
def watched(model: Any) -> frozenset[str]:
    """The fields whose change can move a due instant: the workflow's columns, what
    deadlines count from (calculations' fields included), ``time_zone_field``."""
    workflow = model.workflow
    names = set(workflow.owned_columns) - {NEXT_DUE_AT}
    for works in workflow.deadline_works.values():
        for work in works:
            anchor = work.deadline.field
            calculation = workflow.calculations.get(anchor)
            names |= referenced(calculation) if calculation is not None else {anchor}
    if workflow.time_zone_field:
        names.add(workflow.time_zone_field)
    return frozenset(names)


def moved_by(model: Any, values: Iterable[str]) -> bool:
    """Whether writing ``values`` may move a due instant (any field may, when a model
    method gives each record its holidays)."""
    return isinstance(model.workflow.holidays, str) or bool(watched(model) & set(values))


def fingerprint(model: Any) -> str:
    """What ``next_due_at`` is computed from: the steps, deadlines, zone and holidays declared."""
    workflow = model.workflow
    parts = [
        workflow.state_attribute,
        workflow.time_zone,
        str(workflow.time_zone_field),
        _stable(workflow.holidays),
        repr(sorted((name, _declared(works)) for name, works in workflow.deadline_works.items())),
    ]
    if workflow.working_hours is not None:  # unset, it leaves older fingerprints alone
        parts.append(workflow.working_hours)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _declared(works: Iterable[Any]) -> str:
    """The works' fields that differ from their defaults: a field a later release adds
    with a default leaves the fingerprint alone, so an upgrade recomputes nothing. The
    kind, the default of its class, is named all the same, as when one class held all."""
    return repr(
        [
            [
                (f.name, getattr(w, f.name))
                for f in fields(w)
                if f.name == "kind" or getattr(w, f.name) != f.default
            ]
            for w in works
        ]
    )


def _stable(value: Any) -> str:
    text = repr(value)
    return type(value).__qualname__ if " at 0x" in text else text
