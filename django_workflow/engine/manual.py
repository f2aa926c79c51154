"""Manual transitions: deciding whether a call may move a record, and moving it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..declaration import Route, Transition
from ..errors import (
    ConditionUnmet,
    NoRouteMatched,
    StaleRecord,
    TransitionNotAllowed,
    UnsavedRecord,
    WorkflowPermissionDenied,
)
from ..model import log_values
from ..model.columns import STATE_ENTERED_AT, WORKFLOW_VERSION
from ..model.compiled import CompiledWorkflow
from ..model.conditions import unmet_reason
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from ..policies import allowed
from . import cascades, claims, votes
from .action_saves import collecting, saved_by
from .moves import database, entry_changes, move, move_locked
from .routes import choose_route, fields_read, route_holds, with_values
from .sql import writes


@dataclass(frozen=True)
class Decision:
    """What a manual call of a transition on a record comes to, before anything is written."""

    transition: Transition
    step: str
    target: str
    #: The values the decision read: the write happens only if the row still holds them.
    guard: dict[str, Any]
    #: The holder the actor stands in for (``Step(claim=True)``, an active absence).
    on_behalf_of: Any = None


def decide(
    record: Any, name: str, actor: Any, accepted: dict[str, Any], authorize: bool = True
) -> Decision:
    """Where ``record`` goes through transition ``name`` called by ``actor`` with
    ``accepted``; raises the error the call raises when it may not."""
    model = type(record)
    if record._state.adding:  # no row to move: the guarded write would find nothing
        raise UnsavedRecord(record, name)
    workflow: CompiledWorkflow = workflow_of(record)
    step = getattr(record, workflow.state_attribute)
    declared = workflow.transition(step, name)
    if declared is None:
        raise TransitionNotAllowed(record, name, step)
    unexpected = sorted(set(accepted) - set(declared.accept))
    if unexpected:
        raise TypeError(
            f"{name}() got unexpected values {unexpected}; it accepts {list(declared.accept)}."
        )
    seen = with_values(record, accepted)  # what policies, `when` and routes decide on
    if not available(seen, declared):
        raise ConditionUnmet(record, name, step, unmet_reason(declared, model))
    if authorize and not allowed(workflow.policy_for(step, name), actor, seen, name):
        raise WorkflowPermissionDenied(record, name, actor)
    held, on_behalf_of = claims.holder_check(record, step, name, actor) if authorize else ({}, None)
    target = choose_route(declared.routes or (Route(declared.to),), seen, database(record))
    if target is None:
        raise NoRouteMatched(record, name, step)
    guard = {workflow.state_attribute: step}
    if workflow.versions is not None:  # an upgrade meanwhile makes the call stale
        guard[WORKFLOW_VERSION] = getattr(record, WORKFLOW_VERSION)
    read = fields_read([*declared.routes, Route(step, declared.when)], model)
    for attname in sorted(read - set(accepted)):
        guard[attname] = getattr(record, attname)
    return Decision(declared, step, target, {**guard, **held}, on_behalf_of)


def run_transition(
    record: Any,
    name: str,
    *,
    actor: Any = None,
    authorize: bool = True,
    comment: str = "",
    data: Any = None,
    **accepted: Any,
) -> Any:
    """Move ``record`` through transition ``name`` of its current step; ``comment`` and
    ``data`` are stored on its log row."""
    return take_transition(record, name, accepted, actor, authorize, comment, data)


def take_transition(
    record: Any,
    name: str,
    accepted: dict[str, Any],
    actor: Any = None,
    authorize: bool = True,
    comment: str = "",
    data: Any = None,
    trigger: Trigger = Trigger.MANUAL,
) -> Any:
    """``run_transition`` logged as ``trigger``: a person's call (``manual``) or an event
    from outside (``event``, see ``receiving``)."""
    comment, data = log_values.checked(comment, data)
    decision = decide(record, name, actor, accepted, authorize)
    changes = {**entry_changes(workflow_of(record), decision.target, timezone.now()), **accepted}
    event = Event(
        decision.step,
        decision.target,
        name,
        trigger,
        actor,
        comment=comment,
        data=data,
        from_state_entered_at=getattr(record, STATE_ENTERED_AT),
        on_behalf_of=decision.on_behalf_of,
    )
    take = _with_cascade(record, decision, partial(_take, record, decision, changes, accepted))
    if votes.quorum(decision.transition) is not None:  # a vote: the one reaching it moves
        return votes.cast(record, decision, event, partial(take, event))
    return take(event)


def take_locked(
    record: Any,
    name: str,
    accepted: dict[str, Any],
    data: Any,
    trigger: Trigger,
    along: writes.Along | None = None,
) -> Any:
    """``take_transition`` without an actor or policy, for a record the caller's
    transaction holds locked as read: a refusal raises before anything is written. A
    plain transition (no action, cascade or quorum) is ``move_locked``'s one statement;
    any other runs in a savepoint, so that a refusal undoes its own writes. ``along`` is
    written with the move, before anything reacts to it (``moves.move_locked``)."""
    data = log_values.check_data(data)
    decision = decide(record, name, None, accepted, authorize=False)
    transition = decision.transition
    if transition.action is not None or transition.cascade or votes.quorum(transition) is not None:
        with transaction.atomic(using=database(record)):
            writes.run(along, database(record))
            return take_transition(record, name, accepted, None, False, "", data, trigger)
    changes = {**entry_changes(workflow_of(record), decision.target, timezone.now()), **accepted}
    entered = getattr(record, STATE_ENTERED_AT)
    event = Event(decision.step, decision.target, name, trigger, data=data)
    return move_locked(record, changes, replace(event, from_state_entered_at=entered), along)


def _with_cascade(record: Any, decision: Decision, take: Any) -> Any:
    """``Transition(cascade=...)``: the move takes the children along (``cascades``)."""
    if not decision.transition.cascade:
        return take
    return cascades.cascading(record, decision.transition.cascade, take, _decide_child)


def _decide_child(child: Any, name: str, actor: Any) -> tuple[Any, Any]:
    """A parent's cascade moving ``child`` through ``name``: decided as a call is (its
    ``when``, its routes; not its policy, nor its ``quorum``), logged as ``cascade``. Its
    own cascade, and its move given what that cascade moved (``cascades.walk``)."""
    decision = decide(child, name, actor, {}, authorize=False)
    changes = entry_changes(workflow_of(child), decision.target, timezone.now())
    event = Event(decision.step, decision.target, name, Trigger.CASCADE, actor)

    def take(counts: Any) -> Any:
        data = None if counts is None else cascades.counted(None, counts)
        return _take(child, decision, changes, {}, replace(event, data=data))

    return decision.transition.cascade or None, take


def _take(
    record: Any, decision: Decision, changes: dict[str, Any], accepted: dict[str, Any], event: Event
) -> Any:
    """Move ``record`` as decided: through the transition's action when it has one."""
    if decision.transition.action is not None:
        action = decision.transition.action
        return _move_with_action(record, decision.guard, changes, event, action, accepted)
    return move(record, decision.guard, changes, event)


def permits(record: Any, transition: Any, actor: Any, values: dict[str, Any]) -> bool:
    """Whether ``actor`` may call ``transition`` now with ``values``: its ``when`` and
    its policy, both seeing the record with the values applied."""
    seen = with_values(record, values)
    workflow = workflow_of(record)
    policy = workflow.policy_for(getattr(record, workflow.state_attribute), transition.name)
    return (
        available(seen, transition)
        and allowed(policy, actor, seen, transition.name)
        and claims.holder_allows(record, actor)
        and not votes.voted(record, transition, actor)
    )


def available(record: Any, transition: Any) -> bool:
    """Whether ``Transition(when=...)`` holds for ``record`` (always, without ``when``)."""
    if transition.when is None:
        return True
    return route_holds(transition.when, record, database(record))


def _move_with_action(
    record: Any,
    guard: dict[str, Any],
    changes: dict[str, Any],
    event: Event,
    action: str,
    accepted: dict[str, Any],
) -> Any:
    """``Transition(action=...)``: with the row locked and still as the caller saw it,
    run the method on the record holding the accepted values, save what it set, then
    move. An exception rolls all of it back and reaches the caller."""
    model, db = type(record), database(record)
    with transaction.atomic(using=db):
        rows = model._base_manager.using(db).filter(pk=record.pk, **guard)
        if not rows.select_for_update().exists():
            raise StaleRecord(record, tuple(guard))
        for name, value in accepted.items():
            setattr(record, name, value)
        with collecting(record):
            said = getattr(record, action)()
            saved = saved_by(record)
        if not event.comment and isinstance(said, str):  # the action's word for the log
            event = replace(event, comment=said)
        # The guard held under the lock, before the action: the action may change
        # what ``when`` and the routes read, so only the step is checked again.
        step = model.workflow.state_attribute
        move(record, {step: guard[step]}, {**saved, **changes}, event)
    return record
