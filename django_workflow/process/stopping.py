"""Whether this process was told to stop: loops that claim work look before each claim."""

from __future__ import annotations

import threading

_requested = threading.Event()


def requested() -> bool:
    return _requested.is_set()


def request() -> None:
    """Claim nothing more; what runs now finishes."""
    _requested.set()
