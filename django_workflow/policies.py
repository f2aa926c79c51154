"""Policies: callables ``(actor, record, transition_name) -> bool``, and their SQL form.

The shipped ones are small frozen dataclasses, so two declarations of the
same policy compare equal (steps sharing a transition name may repeat one).
A missing actor (``None``) is refused by every shipped policy.

Each shipped policy also offers ``q(actor) -> Q``: the records it allows
``actor`` to act on, as a filter, so "what may this person act on?" is one
query instead of a call per record (``actionable_by``). A policy that can say
it only for some actors raises ``NotExpressible`` for the others; a policy
with no ``q`` at all is asked record by record. ``narrowing`` reads any
policy either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db.models import Q
from django.utils.module_loading import import_string

Policy = Callable[[Any, Any, str], bool]

#: The filter every record meets: ``Q()``. Combine with ``either``/``both``, never with
#: ``|``: Django reads ``Q() | x`` as ``x``.
EVERYTHING = Q()
#: The filter no record meets; the database is not asked when it stands alone.
NOTHING = Q(pk__in=[])


class NotExpressible(Exception):
    """Raised by a policy's ``q(actor)`` when no filter says exactly what it allows
    ``actor``: the caller asks the policy record by record instead."""


@dataclass(frozen=True)
class Narrowing:
    """What a filter can say of a policy for one actor: ``q`` holds every record the
    policy allows; when ``exact``, only those (else each must still be asked)."""

    q: Q
    exact: bool


def narrowing(policy: Any, actor: Any) -> Narrowing:
    """The filter ``policy`` (``None``: no policy, everyone) offers for ``actor``."""
    if policy is None:
        return Narrowing(EVERYTHING, True)
    narrow = getattr(policy, "narrow", None)
    if callable(narrow):
        return narrow(actor)
    q = getattr(policy, "q", None)
    if not callable(q):  # a custom policy without ``q``: every record may be allowed
        return Narrowing(EVERYTHING, False)
    try:
        return Narrowing(q(actor), True)
    except NotExpressible:
        return Narrowing(EVERYTHING, False)


def allows_everything(condition: Q) -> bool:
    """Whether ``condition`` is ``EVERYTHING`` (an empty ``Q``), without comparing trees."""
    return not condition.children and not condition.negated


def allows_nothing(condition: Q) -> bool:
    """Whether ``condition`` is ``NOTHING``, without comparing trees."""
    if condition is NOTHING:
        return True
    children = condition.children
    return len(children) == 1 and not condition.negated and children[0] == ("pk__in", [])


def either(*conditions: Q) -> Q:
    """``a | b | …``, where ``EVERYTHING`` wins and ``NOTHING`` drops out."""
    kept = [c for c in conditions if not allows_nothing(c)]
    if any(allows_everything(c) for c in kept):
        return EVERYTHING
    return _joined(kept, Q.OR) if kept else NOTHING


def both(*conditions: Q) -> Q:
    """``a & b & …``, where ``NOTHING`` wins and ``EVERYTHING`` drops out."""
    if any(allows_nothing(c) for c in conditions):
        return NOTHING
    kept = [c for c in conditions if not allows_everything(c)]
    return _joined(kept, Q.AND) if kept else EVERYTHING


def _joined(conditions: list[Q], connector: str) -> Q:
    """One ``Q`` node, the children of same-connector nodes spliced in: a flat tree
    that Django turns into SQL faster, and that reads as written by hand."""
    if len(conditions) == 1:
        return conditions[0]
    children: list[Any] = []
    for condition in conditions:
        if not condition.negated and (condition.connector == connector or len(condition) == 1):
            children.extend(condition.children)
        else:
            children.append(condition)
    return Q(*children, _connector=connector)


def _all_or_nothing(allowed: bool) -> Q:
    return EVERYTHING if allowed else NOTHING


@dataclass(frozen=True)
class actor_attribute_equals:
    """Allow actors whose ``attribute`` equals ``value``."""

    attribute: str
    value: Any

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        return actor is not None and getattr(actor, self.attribute, None) == self.value

    def q(self, actor: Any) -> Q:
        """Every record or none: the answer does not depend on the record."""
        return _all_or_nothing(self(actor, None, ""))


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

    def narrow(self, actor: Any) -> Narrowing:
        """Every record for a global grant. Without one, no record when only
        ``ModelBackend`` answers (it grants nothing on objects); else an object
        backend may grant some records, which no filter can list: ask each."""
        if actor is None:
            return Narrowing(NOTHING, True)
        if actor.has_perm(self.permission):
            return Narrowing(EVERYTHING, True)
        if _grants_only_globally(actor):
            return Narrowing(NOTHING, True)
        return Narrowing(EVERYTHING, False)

    def q(self, actor: Any) -> Q:
        """Raises ``NotExpressible`` where object permissions may grant some records."""
        narrowed = self.narrow(actor)
        if not narrowed.exact:
            raise NotExpressible(
                f"has_perm({self.permission!r}): an object-permission backend may grant "
                "it on some records, and no filter can list them."
            )
        return narrowed.q


def _grants_only_globally(actor: Any) -> bool:
    """Whether Django's auth answers ``actor``'s object checks, and every configured
    backend is a ``ModelBackend`` (which grants nothing on objects)."""
    from django.conf import settings
    from django.contrib.auth.models import AnonymousUser, PermissionsMixin

    if not isinstance(actor, PermissionsMixin | AnonymousUser):
        return False  # its own has_perm: it may answer anything about a record
    return _model_backends_only(tuple(settings.AUTHENTICATION_BACKENDS))


@cache
def _model_backends_only(paths: tuple[str, ...]) -> bool:
    from django.contrib.auth.backends import ModelBackend

    return all(issubclass(import_string(path), ModelBackend) for path in paths)


@dataclass(frozen=True)
class _ActiveStaff:
    """Allow active staff users (``is_staff``; one instance, so it compares by identity)."""

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        return bool(
            actor is not None
            and getattr(actor, "is_staff", False)
            and getattr(actor, "is_active", True)
        )

    def q(self, actor: Any) -> Q:
        """Every record or none: the answer does not depend on the record."""
        return _all_or_nothing(self(actor, None, ""))

    def __repr__(self) -> str:
        return "is_staff"


is_staff = _ActiveStaff()


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

    def q(self, actor: Any) -> Q:
        """``Q(field=actor)``. A path through a to-many relation joins as any filter
        does: ``actionable_by`` puts such a condition in a subquery, so rows never repeat."""
        if actor is None or getattr(actor, "pk", None) is None:
            return NOTHING
        return Q(**{self.field: actor})


@dataclass(frozen=True, init=False)
class any_of:
    """Allow when at least one of ``policies`` allows."""

    policies: tuple[Policy, ...]

    def __init__(self, *policies: Policy) -> None:
        object.__setattr__(self, "policies", policies)

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        return any(policy(actor, record, name) for policy in self.policies)

    def narrow(self, actor: Any) -> Narrowing:
        """The union; exact when every part is, or when an exact part allows everything."""
        parts = [narrowing(policy, actor) for policy in self.policies]
        exact = [p.q for p in parts if p.exact]
        settled = all(p.exact for p in parts) or allows_everything(either(*exact))
        return Narrowing(either(*(p.q for p in parts)), settled)

    def q(self, actor: Any) -> Q:
        return _exactly(self.narrow(actor), self)


@dataclass(frozen=True, init=False)
class all_of:
    """Allow when every one of ``policies`` allows."""

    policies: tuple[Policy, ...]

    def __init__(self, *policies: Policy) -> None:
        object.__setattr__(self, "policies", policies)

    def __call__(self, actor: Any, record: Any, name: str) -> bool:
        return all(policy(actor, record, name) for policy in self.policies)

    def narrow(self, actor: Any) -> Narrowing:
        """The intersection; exact when every part is, or when an exact part allows nothing."""
        parts = [narrowing(policy, actor) for policy in self.policies]
        exact = [p.q for p in parts if p.exact]
        settled = all(p.exact for p in parts) or allows_nothing(both(*exact))
        return Narrowing(both(*(p.q for p in parts)), settled)

    def q(self, actor: Any) -> Q:
        return _exactly(self.narrow(actor), self)


def _exactly(narrowed: Narrowing, policy: Any) -> Q:
    if not narrowed.exact:
        raise NotExpressible(f"{policy!r}: a part of it has no exact filter for this actor.")
    return narrowed.q


def allowed(policy: Policy | None, actor: Any, record: Any, name: str) -> bool:
    """Whether ``policy`` (``None``: no policy) lets ``actor`` call ``name`` on ``record``."""
    return policy is None or bool(policy(actor, record, name))
