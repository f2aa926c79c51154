"""A writer beside a worker: how long its short writes wait for SQLite's one write lock."""

import threading
import time

from django.db import connections, transaction

from tests.testapp.models import Ticket


class Writer(threading.Thread):
    """Writes one row as often as it may; notes the longest any write waited."""

    def __init__(self) -> None:
        super().__init__()
        self.done = threading.Event()
        self.longest = 0.0
        self.writes = 0

    def run(self) -> None:
        ticket = Ticket.objects.create()
        try:
            while not self.done.is_set():
                started = time.monotonic()
                with transaction.atomic():
                    Ticket._base_manager.filter(pk=ticket.pk).update(reopened=self.writes)
                self.longest = max(self.longest, time.monotonic() - started)
                self.writes += 1
                time.sleep(0.005)
        finally:
            connections.close_all()
