"""The options ``class Workflow:`` accepts: each one's default, the test of its type and
what it must be; and the record of an option given a value of the wrong type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..declaration import Sla, Transition, Undo
from .columns import STATE_ENTERED_AT


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


#: Every option ``class Workflow:`` accepts: its default, a test of its type, and what it must be.
OPTIONS: dict[str, tuple[Any, Callable[[Any], bool], str]] = {
    "state_attribute": (
        "state",
        lambda v: isinstance(v, str) and v.isidentifier() and v != STATE_ENTERED_AT,
        f"an identifier other than {STATE_ENTERED_AT!r}",
    ),
    "check_interval": ("* * * * *", _text, "a cron expression"),
    "queue": ("workflow", _text, "a non-empty string"),
    "scheduler": ("polling", _text, "the name of a scheduler"),
    "log": (False, lambda v: isinstance(v, bool), "True or False"),
    "undo": (None, lambda v: v is None or isinstance(v, Undo), "an Undo(...)"),
    "policies": ({}, lambda v: isinstance(v, dict), "a dict of transition name to policy"),
    "calculations": ({}, lambda v: isinstance(v, dict), "a dict of name to expression"),
    "time_zone": ("UTC", _text, "an IANA time zone name"),
    "time_zone_field": (None, lambda v: v is None or _text(v), "a field name"),
    "holidays": (None, lambda v: True, "a holidays calendar"),
    "working_hours": (None, lambda v: v is None or _text(v), "a string such as '09:00-17:00'"),
    "save_signals": (True, lambda v: isinstance(v, bool), "True or False"),
    "assignment": (False, lambda v: isinstance(v, bool), "True or False"),
    "slas": (
        {},
        lambda v: isinstance(v, dict) and all(isinstance(s, Sla) for s in v.values()),
        "a dict of name to Sla(...)",
    ),
    "from_any_step": (
        (),
        lambda v: isinstance(v, list | tuple) and all(isinstance(t, Transition) for t in v),
        "a list of Transition(...)",
    ),
    "events": ({}, lambda v: isinstance(v, dict), "a dict of event name to Receive(...)"),
    "version": (
        1,
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 < v < 32768,
        "a positive integer below 32768",
    ),
    "previous": (
        (),
        lambda v: isinstance(v, list | tuple) and all(isinstance(c, type) for c in v),
        "a list of declaration classes",
    ),
}


@dataclass(frozen=True)
class Problem:
    """An option given a value of the wrong type (read as its default meanwhile)."""

    option: str
    value: Any
    expected: str
