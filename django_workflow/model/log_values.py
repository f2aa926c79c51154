"""What a call's ``comment`` and ``data`` may hold: what every database stores on the
log row and gives back unchanged.

Text must be valid Unicode without NUL (PostgreSQL refuses NUL, and a lone
surrogate cannot be encoded: stored on SQLite, the row could no longer be
read). ``data`` is JSON: ``None``, booleans, finite numbers, text, lists and
objects with text keys, at most ``MAX_DATA_DEPTH`` containers deep and
``MAX_DATA_BYTES`` long as UTF-8 JSON. Anything else raises
``InvalidLogValue`` (a ``ValueError``) before anything is written.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.utils.functional import Promise

from ..errors import InvalidLogValue

#: How many lists and objects may nest in ``data``.
MAX_DATA_DEPTH = 32
#: How long ``data`` may be, encoded as UTF-8 JSON.
MAX_DATA_BYTES = 65_536
#: How deep an event's ``data`` may nest: more than any sender's payload, well within
#: what the database's JSON is written and read back with. Its size is not limited here:
#: a webhook's body is bounded by ``EVENT_MAX_BODY``.
MAX_EVENT_DEPTH = 200


def checked(comment: Any, data: Any) -> tuple[str, Any]:
    """``(comment, data)`` as the log row stores them; raises ``InvalidLogValue``."""
    return check_comment(comment), check_data(data)


def check_comment(comment: Any) -> str:
    """The comment as text (``None`` is no comment)."""
    if comment is None:
        return ""
    if isinstance(comment, Promise):  # a lazy translation
        comment = str(comment)
    if not isinstance(comment, str):
        raise InvalidLogValue("comment", f"must be text, not {type(comment).__name__}.")
    problem = text_problem(comment)
    if problem:
        raise InvalidLogValue("comment", problem)
    return comment


def check_data(data: Any) -> Any:
    """``data`` unchanged when it is JSON every database stores and reads back."""
    if data is None:  # most calls: nothing attached
        return None
    _check_value(data, depth=0)
    size = len(json.dumps(data, ensure_ascii=False).encode())
    if size > MAX_DATA_BYTES:
        raise InvalidLogValue(
            "data", f"is {size} bytes as JSON; at most {MAX_DATA_BYTES} are stored."
        )
    return data


def check_event_data(data: Any) -> None:
    """``InvalidLogValue`` unless an event's ``data`` is JSON every database stores and
    reads back: no NUL, no lone surrogate, at most ``MAX_EVENT_DEPTH`` deep."""
    if data is not None:
        _check_value(data, depth=0, deepest=MAX_EVENT_DEPTH)


def text_problem(text: str) -> str:
    """Why ``text`` cannot be stored, or ``""``."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which databases do not store in text."
    try:
        text.encode()
    except UnicodeEncodeError:
        return "contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode."
    return ""


def _check_value(value: Any, depth: int, deepest: int = MAX_DATA_DEPTH) -> None:
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidLogValue("data", f"holds {value}, which JSON cannot store.")
        return
    if isinstance(value, str):
        _check_text(value)
        return
    if not isinstance(value, dict | list | tuple):
        raise InvalidLogValue(
            "data",
            f"holds a {type(value).__name__}; use JSON values only (None, booleans, "
            "numbers, text, lists and dicts with text keys).",
        )
    if depth >= deepest:
        raise InvalidLogValue("data", f"nests deeper than {deepest} lists or objects.")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidLogValue("data", f"has the key {key!r}; JSON object keys are text.")
            _check_text(key)
            _check_value(item, depth + 1, deepest)
    else:
        for item in value:
            _check_value(item, depth + 1, deepest)


def _check_text(text: str) -> None:
    problem = text_problem(text)
    if problem:
        raise InvalidLogValue("data", problem)
