"""Callers racing on one record, each on a database connection of its own (the
PostgreSQL concurrency tests)."""

import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections


def race(
    model: Any,
    pk: Any,
    calls: Sequence[Callable[[Any], Any]],
    refusals: tuple[type[BaseException], ...],
    done: str = "done",
) -> list[str]:
    """Each call gets the record loaded on a connection of its own, then all run at once.
    Each call's outcome: ``done``, the class name of the refusal it raised, or the repr of
    any other error (a deadlock or any other surprise: the test says which)."""
    barrier = threading.Barrier(len(calls))
    outcomes = [""] * len(calls)

    def run(index: int, call: Callable[[Any], Any]) -> None:
        try:
            record = model.objects.get(pk=pk)
            barrier.wait()
            call(record)
            outcomes[index] = done
        except refusals as error:
            outcomes[index] = type(error).__name__
        except Exception as error:
            outcomes[index] = repr(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes
