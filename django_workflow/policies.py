"""Policies: callables ``(actor, record, transition_name) -> bool``.

The shipped ones are small frozen dataclasses, so two declarations of the
same policy compare equal (steps sharing a transition name may repeat one).
A missing actor (``None``) is refused by every shipped policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Policy = Callable[[Any, Any, str], bool]


@dataclass(frozen=True)
class actor_attribute_equals:
    """Allow actors whose ``attribute`` equals ``value``."""

    attribute: str
    value: Any

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        return actor is not None and getattr(actor, self.attribute, None) == self.value


@dataclass(frozen=True)
class has_perm:
    """Allow actors who hold ``permission`` globally or on the record.

    Asks ``actor.has_perm(permission)`` first, then ``actor.has_perm(permission,
    record)``: Django's ``ModelBackend`` answers only the first (it returns
    ``False`` whenever an object is given), object-permission backends such as
    django-rules or django-guardian answer the second, so either kind of grant
    allows.
    """

    permission: str

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        if actor is None:
            return False
        if actor.has_perm(self.permission):
            return True
        return record is not None and bool(actor.has_perm(self.permission, record))


def is_staff(actor: Any, record: Any, name: str) -> bool:
    """Allow active staff users."""
    return bool(
        actor is not None
        and getattr(actor, "is_staff", False)
        and getattr(actor, "is_active", True)
    )


@dataclass(frozen=True)
class relates_to_actor_via:
    """Allow the actor the record points at through ``field`` (``"a__b"`` follows relations)."""

    field: str

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        if actor is None:
            return False
        target = record
        for part in self.field.split("__"):
            target = getattr(target, part, None)
            if target is None:
                return False
        if hasattr(target, "filter"):  # a to-many relation
            return target.filter(pk=actor.pk).exists()
        return target == actor


@dataclass(frozen=True, init=False)
class any_of:
    """Allow when at least one of ``policies`` allows."""

    policies: tuple[Policy, ...]

    def __init__(self, *policies: Policy) -> None:
        object.__setattr__(self, "policies", policies)

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        return any(policy(actor, record, name) for policy in self.policies)


@dataclass(frozen=True, init=False)
class all_of:
    """Allow when every one of ``policies`` allows."""

    policies: tuple[Policy, ...]

    def __init__(self, *policies: Policy) -> None:
        object.__setattr__(self, "policies", policies)

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        return all(policy(actor, record, name) for policy in self.policies)


def allowed(policy: Policy | None, actor: Any, record: Any, name: str) -> bool:
    """Whether ``policy`` (``None``: no policy) lets ``actor`` call ``name`` on ``record``."""
    return policy is None or bool(policy(actor, record, name))
