"""Callers racing on one record, each on a database connection of its own (the
PostgreSQL concurrency tests)."""

import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections

#: What a racer does before the start (on its own connection), and at the start with that.
Job = tuple[Callable[[], Any], Callable[[Any], Any]]


def together(jobs: Sequence[Job]) -> list[Any]:
    """Each job's preparation on a connection of its own, then all its acts released at once.
    Each act's result, or the repr of what it raised (a deadlock or any other surprise: the
    test says which)."""
    barrier = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)

    def run(index: int, prepare: Callable[[], Any], act: Callable[[Any], Any]) -> None:
        try:
            prepared = prepare()
            barrier.wait()
            results[index] = act(prepared)
        except Exception as error:
            results[index] = repr(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, *job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def at_once(calls: Sequence[Callable[[], Any]]) -> list[Any]:
    """The calls released together; their results (or the repr of what they raised)."""
    return together([(lambda: None, lambda _, call=call: call()) for call in calls])


def race(
    model: Any,
    pk: Any,
    calls: Sequence[Callable[[Any], Any]],
    refusals: tuple[type[BaseException], ...],
    done: str = "done",
) -> list[str]:
    """Each call gets the record loaded on a connection of its own, then all run at once.
    Each call's outcome: ``done``, the class name of the refusal it raised, or the repr of
    any other error."""

    def refused_or_done(call: Callable[[Any], Any]) -> Callable[[Any], str]:
        def act(record: Any) -> str:
            try:
                call(record)
            except refusals as error:
                return type(error).__name__
            return done

        return act

    return together([(lambda: model.objects.get(pk=pk), refused_or_done(c)) for c in calls])
