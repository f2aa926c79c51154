"""A step's ``time_limit`` around one action, inside a django-q2 task's own alarm.

django-q2 arms ``SIGALRM`` for a task's timeout. A run of many records arms its
own alarm for each action and gives django-q2's back, less the time the action
took, afterwards. Outside a django-q2 worker (no alarm handler installed, or
another thread) nothing is armed, as before.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from ..errors import TimeLimitExceeded


@contextmanager
def time_limited(limit: timedelta | None) -> Iterator[None]:
    """Raise ``TimeLimitExceeded`` in the action once ``limit`` has passed."""
    if limit is None or not _alarms_handled():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise_time_limit)
    left = signal.alarm(0)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, max(limit.total_seconds(), 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left:
            signal.alarm(max(1, math.ceil(left - (time.monotonic() - started))))


def _alarms_handled() -> bool:
    if threading.current_thread() is not threading.main_thread():
        return False
    return signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)


def _raise_time_limit(signum: int, frame: Any) -> None:
    raise TimeLimitExceeded("the action ran past its time limit")
