"""Statements built once: the one cache of the engine's SQL, per builder and key.

Django compiles a queryset's SQL again on every call; a poll firing thousands of
deadlines spent more time there than in the database. Each statement the engine sends
by hand, or compiles through Django's own compiler and sends again with new
parameters, is built the first time a process asks for it and kept for its life: the
key names what the statement depends on (a model, the columns written, the database).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

Built = TypeVar("Built")

_built: dict[tuple[Callable[..., Any], Hashable], Any] = {}


def once(build: Callable[..., Built], key: Hashable, *args: Any) -> Built:
    """``build(*args)``, called the first time ``key`` asks for ``build``'s statement."""
    try:
        return _built[build, key]
    except KeyError:
        built = _built[build, key] = build(*args)
        return built


def keep(build: Callable[..., Any], key: Hashable, built: Any) -> None:
    """Keep ``built`` as ``build``'s statement for ``key``: for a builder whose result is
    kept only once it proved right (its parameters bound in the order expected)."""
    _built[build, key] = built


def kept(build: Callable[..., Any], key: Hashable) -> Any:
    """``build``'s statement for ``key``, or ``None`` while none was kept."""
    return _built.get((build, key))
