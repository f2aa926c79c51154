"""``manage.py workflow_deliver FILE``: replay events from a file of JSON lines, one event
per line as the webhook takes it (docs/events.md). Each line is delivered on its own, so
a replay interrupted half-way is run again from the start: what was applied comes back
``duplicate``. ``--buffered`` looks at every buffered event again instead."""

from __future__ import annotations

import io
import json
import sys
from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...engine.buffering import recheck_buffered
from ...engine.receiving import deliver
from ...errors import InvalidDelivery
from ...model.event_input import deliver_one
from ...model.triggers import Outcome


class Command(BaseCommand):
    help = (
        'Deliver the events of a JSON-lines file ({"event", "key", "id", "data", "seq"} per '
        "line), in order, and count the outcomes. - reads standard input."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", nargs="?", help="a file of JSON lines, or - for standard input")
        parser.add_argument(
            "--buffered",
            action="store_true",
            help="apply the buffered events whose record can take them now, and expire "
            "those past their buffer",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["buffered"] == bool(options["file"]):
            raise CommandError("Give a FILE of events, or --buffered (not both).")
        if options["buffered"]:
            counts = recheck_buffered()
            said = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
            self.stdout.write(f"{sum(counts.values())} buffered: {said or 'none'}.")
            return
        path = options["file"]
        try:
            # Bytes: a line that is no UTF-8 is refused alone, not the rest of the file.
            stream = _stdin() if path == "-" else open(path, "rb")  # noqa: SIM115
        except OSError as problem:
            raise CommandError(f"Cannot read {path}: {problem.strerror}.") from None
        with stream:
            outcomes, refused = self._replay(stream)
        counts = ", ".join(f"{outcomes[o]} {o.value}" for o in Outcome if outcomes[o])
        self.stdout.write(f"{sum(outcomes.values())} delivered: {counts or 'none'}.")
        if refused:
            raise CommandError(f"{refused} line(s) could not be delivered (listed above).")

    def _replay(self, lines: Any) -> tuple[Counter[Outcome], int]:
        outcomes: Counter[Outcome] = Counter()
        refused = 0
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                event = json.loads(line.decode("utf-8"))
                outcomes[Outcome(deliver_one(event, deliver).outcome)] += 1
            except RecursionError:
                refused += 1
                self.stderr.write(f"line {number}: it nests too deeply to be read.")
                continue
            except (ValueError, InvalidDelivery) as problem:
                refused += 1
                self.stderr.write(f"line {number}: {problem}")
        return outcomes, refused


def _stdin() -> Any:
    """Standard input as bytes (a text stream put in its place, as tests do, is read as
    its text encoded)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return buffer
    return io.BytesIO(sys.stdin.read().encode("utf-8", "surrogateescape"))
