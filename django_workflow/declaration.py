"""What a user can declare inside ``class Workflow:``.

Plain data, no Django imports. Constructors never raise: a malformed
declaration is stored as written and reported by ``manage.py check``, so a
typo cannot crash Django start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

Duration = timedelta | tuple[int, str] | str
#: Keyword arguments of every transition call that go to its log row, not to fields.
RESERVED = ("comment", "data")
Policy = Callable[[Any, Any, str], bool]


@dataclass(frozen=True)
class Route:
    """Go to ``to`` when ``when`` (a ``Q`` or a ``(record) -> bool`` callable) holds."""

    to: str
    when: Any = None

    @property
    def is_conditional(self) -> bool:
        return self.when is not None


@dataclass(frozen=True)
class Retry:
    """How often an automatic step's action is tried, and how long between tries."""

    max_attempts: int = 1
    backoff: Duration = "exponential"


@dataclass(frozen=True)
class Undo:
    """Opt-in undo of ``undoable=True`` transitions (needs ``log = True``)."""

    within: Duration | None = None
    same_actor: bool = False
    policy: Policy | None = None


@dataclass(frozen=True, init=False)
class Transition:
    """A named way out of a manual step: ``to`` a step, or through ordered routes."""

    name: str
    routes: tuple[Any, ...]
    to: str | None
    accept: tuple[str, ...]
    undoable: bool
    label: Any
    when: Any
    action: str | None
    unmet: Any
    #: The log row's comment when neither the caller nor the action gives one.
    comment: str
    #: Arbitrary data of the project's, read back from the declaration.
    custom: Any
    #: How many distinct actors must call it before it moves the record (None: the first).
    quorum: Any
    #: ``{related_name: child transition}``: the children that offer it take it too.
    cascade: Any

    def __init__(
        self,
        name: str,
        *routes: Route,
        to: str | None = None,
        accept: Any = (),
        undoable: bool = False,
        label: Any = None,
        when: Any = None,
        action: str | None = None,
        unmet: Any = None,
        comment: str = "",
        custom: Any = None,
        quorum: Any = None,
        cascade: Any = None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "routes", routes)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "accept", _as_tuple(accept))
        object.__setattr__(self, "undoable", undoable)
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "when", when)
        object.__setattr__(self, "action", action)
        #: What people read when ``when`` does not hold (lazy translation strings allowed).
        object.__setattr__(self, "unmet", unmet)
        object.__setattr__(self, "comment", comment)
        object.__setattr__(self, "custom", {} if custom is None else custom)
        object.__setattr__(self, "quorum", quorum)
        object.__setattr__(self, "cascade", cascade)

    def __hash__(self) -> int:
        # By name and target: its other fields may hold dicts (custom, cascade), and
        # projects keep transitions in sets and dict keys. Equal transitions hash alike.
        return hash((Transition, self.name, self.to))

    @property
    def title(self) -> Any:
        """What people read: ``label``, else the humanised name."""
        return self.label if self.label is not None else humanise(self.name)

    @property
    def targets(self) -> tuple[str, ...]:
        if self.routes:
            return tuple(getattr(route, "to", None) for route in self.routes)
        return (self.to,) if self.to is not None else ()


@dataclass(frozen=True)
class Timeout:
    """A deadline in a step: run ``action`` once per round, or move ``transition_to``.

    ``fire_after`` counts from ``field`` (default ``state_entered_at``); ``fire_at``
    names a field holding the instant itself. ``label`` is how people read it.
    """

    name: str
    _: KW_ONLY
    fire_after: Duration | None = None
    fire_at: str | None = None
    field: str | None = None
    action: str | None = None
    transition_to: str | None = None
    check_interval: str | None = None
    self_scheduled: bool = False
    retry: Retry | None = None
    label: Any = None

    @property
    def title(self) -> Any:
        """What people read: ``label``, else the humanised name."""
        return self.label if self.label is not None else humanise(self.name)


@dataclass(frozen=True)
class Every:
    """Run ``action`` while a record stays in the step: every ``interval``, or at the
    local wall-clock times of ``cron`` (in the record's zone), until ``until``.

    ``business_days_only`` (with ``cron``) skips days that are not working days;
    ``times`` stops after that many firings per stay in the step. ``label`` is how
    people read it.
    """

    name: str
    _: KW_ONLY
    interval: Duration | None = None
    action: str | None = None
    until: Duration | None = None
    last_fired_field: str | None = None
    check_interval: str | None = None
    cron: str | None = None
    business_days_only: bool = False
    times: int | None = None
    label: Any = None

    @property
    def title(self) -> Any:
        """What people read: ``label``, else the humanised name."""
        return self.label if self.label is not None else humanise(self.name)


@dataclass(frozen=True, init=False)
class Join:
    """In a step of the parent: leave for ``to`` once every child reached by the reverse
    relation ``related_name`` is in one of ``all_in``, or for ``any_in[child_step]`` as
    soon as one child is in ``child_step``."""

    related_name: Any
    all_in: Any
    to: Any
    any_in: Any

    def __init__(
        self, related_name: Any, *, all_in: Any = (), to: Any = None, any_in: Any = None
    ) -> None:
        object.__setattr__(self, "related_name", related_name)
        object.__setattr__(self, "all_in", all_in)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "any_in", {} if any_in is None else any_in)


@dataclass(frozen=True)
class Receive:
    """In ``Workflow.events``: an event from outside, correlated to the record whose field
    ``key`` holds the event's key, calls ``transition`` on it; with ``buffer``, an event
    arriving before the record can take it waits that long for it."""

    key: Any
    transition: Any
    buffer: Duration | None = None


@dataclass(frozen=True, init=False)
class Sla:
    """A service-level clock in ``Workflow.slas``: it runs while the record is in a
    ``runs_in`` step, pauses in any other non-terminal step and stops at a terminal one,
    never restarted by re-entering a step. At ``warn_at`` (a fraction of ``target``) it
    calls ``on_warn``, at ``target`` ``on_breach``: a model method or a transition."""

    target: Any
    runs_in: Any
    warn_at: Any
    on_warn: Any
    on_breach: Any

    def __init__(
        self,
        target: Any,
        runs_in: Any = (),
        warn_at: Any = None,
        on_warn: Any = None,
        on_breach: Any = None,
    ) -> None:
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "runs_in", _as_tuple(runs_in))
        object.__setattr__(self, "warn_at", warn_at)
        object.__setattr__(self, "on_warn", on_warn)
        object.__setattr__(self, "on_breach", on_breach)


class StepKind(StrEnum):
    """What a step is, as the diagram and the admin show it (``Step.kind``)."""

    #: Runs an ``action`` in the worker, then moves on its own.
    AUTOMATIC = "automatic"
    #: Waits for a person: it declares transitions and no action.
    MANUAL = "manual"
    #: No way out.
    TERMINAL = "terminal"
    #: Left only by a timeout (or kept by an ``every``).
    WAIT = "wait"


@dataclass(frozen=True, init=False)
class Step:
    """A state a record can be in: automatic, manual, wait or terminal."""

    children: tuple[Any, ...]
    action: str | None
    on_success: Any
    on_error: str | None
    terminal: bool
    initial: bool
    policy: Policy | None
    retry: Retry | None
    time_limit: Duration | None
    label: Any
    on_enter: str | None
    #: Only the record's holder may call the step's transitions (``Workflow.assignment``).
    claim: Any
    #: A claim that has not moved the record within this duration is released.
    release_after: Duration | None

    def __init__(
        self,
        *children: Any,
        action: str | None = None,
        on_success: Any = None,
        on_error: str | None = None,
        terminal: bool = False,
        initial: bool = False,
        policy: Policy | None = None,
        retry: Retry | None = None,
        time_limit: Duration | None = None,
        label: Any = None,
        on_enter: str | None = None,
        claim: Any = False,
        release_after: Duration | None = None,
    ) -> None:
        values = dict(
            children=children,
            action=action,
            on_success=on_success,
            on_error=on_error,
            terminal=terminal,
            initial=initial,
            policy=policy,
            retry=retry,
            time_limit=time_limit,
            label=label,
            on_enter=on_enter,
            claim=claim,
            release_after=release_after,
        )
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def transitions(self) -> tuple[Transition, ...]:
        return tuple(child for child in self.children if isinstance(child, Transition))

    @property
    def joins(self) -> tuple[Join, ...]:
        return tuple(child for child in self.children if isinstance(child, Join))

    @property
    def timeouts(self) -> tuple[Timeout, ...]:
        return tuple(child for child in self.children if isinstance(child, Timeout))

    @property
    def everies(self) -> tuple[Every, ...]:
        return tuple(child for child in self.children if isinstance(child, Every))

    @property
    def deadlines(self) -> tuple[Timeout | Every, ...]:
        return tuple(child for child in self.children if isinstance(child, Timeout | Every))

    @property
    def routes(self) -> tuple[Any, ...]:
        """``on_success`` as routes: a plain step name is one unconditional route."""
        if self.on_success is None:
            return ()
        if isinstance(self.on_success, str):
            return (Route(self.on_success),)
        if isinstance(self.on_success, list | tuple):
            return tuple(self.on_success)
        return (self.on_success,)

    @property
    def is_automatic(self) -> bool:
        return self.action is not None

    @property
    def is_manual(self) -> bool:
        return bool(self.transitions) and not self.is_automatic

    @property
    def is_terminal(self) -> bool:
        """No way out (``on_enter`` is an effect of arriving, not a way out)."""
        return self.terminal or not (self.children or self.action or self.on_success)

    @property
    def kind(self) -> StepKind:
        if self.is_automatic:
            return StepKind.AUTOMATIC
        if self.is_manual:
            return StepKind.MANUAL
        if self.is_terminal:
            return StepKind.TERMINAL
        return StepKind.WAIT


def humanise(name: Any) -> str:
    """``"payment_failed"`` → ``"Payment failed"``: the default label of a name."""
    text = str(name).replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, str):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        return (value,)
