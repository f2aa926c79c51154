"""A step's ``time_limit`` around one action or ``on_enter`` effect.

``SIGALRM`` stops the block in the main thread once the limit has passed. A
timer armed before (django-q2's task timeout, around a run of many records) is
put back with what is left of it. Elsewhere (another thread, no ``SIGALRM``)
nothing is armed, and django-q2's own timeout is the limit.
"""

from __future__ import annotations

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
    """Raise ``TimeLimitExceeded`` in the block once ``limit`` has passed (SIGALRM, in the
    main thread where there is one); a timer armed before (django-q2's task timeout) is
    put back with what is left of it."""
    if limit is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(f"the attempt ran past its time limit ({limit})")

    try:
        before = signal.signal(signal.SIGALRM, stop)
    except (AttributeError, ValueError):  # no SIGALRM here (Windows)
        yield
        return
    started = time.monotonic()
    outer, _interval = signal.setitimer(signal.ITIMER_REAL, limit.total_seconds())
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
        if outer:
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))
