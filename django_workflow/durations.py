"""Reading the durations a declaration is written in."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

UNITS = {
    "s": "seconds",
    "second": "seconds",
    "seconds": "seconds",
    "m": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "h": "hours",
    "hour": "hours",
    "hours": "hours",
    "d": "days",
    "day": "days",
    "days": "days",
}
_TEXT = re.compile(r"^\s*(\d+)\s*([a-z]+)\s*$")


class InvalidDuration(ValueError):
    """A duration that cannot be read; the message quotes it."""


def parse_duration(value: Any) -> timedelta:
    """``timedelta``, ``(3, "days")`` or ``"30s" "5m" "4h" "2d"`` as a positive timedelta."""
    if isinstance(value, timedelta):
        result = value
    elif isinstance(value, tuple) and len(value) == 2:
        result = _from_amount(value[0], value[1], value)
    elif isinstance(value, str) and (match := _TEXT.match(value)):
        result = _from_amount(int(match[1]), match[2], value)
    else:
        raise InvalidDuration(
            f"{value!r} is not a duration; write a timedelta, (3, 'days') or a string "
            "such as '30s', '5m', '4h' or '2d'."
        )
    if result <= timedelta(0):
        raise InvalidDuration(f"{value!r} is not a positive duration.")
    return result


def _from_amount(amount: Any, unit: Any, original: Any) -> timedelta:
    name = UNITS.get(unit) if isinstance(unit, str) else None
    if name is None or not isinstance(amount, int) or isinstance(amount, bool):
        raise InvalidDuration(
            f"{original!r} is not a duration; the amount must be a whole number and the "
            f"unit one of {', '.join(sorted(set(UNITS.values())))} (or s, m, h, d)."
        )
    return timedelta(**{name: amount})
