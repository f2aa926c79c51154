"""``QuerySet.transition``: one transition for many records, one outcome per record.

Each record is decided as ``record.transition()`` decides it (the step offers
the name, ``when``, the policy, the route), then the records that go the same
way — same step, same target, same values of the fields the decision read —
move together: their rows are locked, re-checked by that guard and written by
one UPDATE, each with its own log row, save signals and ``step_changed``.
A record that changed meanwhile is reported stale and left as it is.
Transitions with an ``action`` run it per record, through ``record.transition()``;
so do ``quorum`` transitions, whose call is a vote per record (the outcome is the
step the record is in after it), and ``cascade`` transitions, each record moving its
own children.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from django.db import transaction
from django.utils import timezone

from .. import engine
from ..errors import StaleRecord, WorkflowError
from ..model import log_values
from ..model.triggers import Event, Trigger
from ..model.versions import version_of, workflow_of
from .votes import quorum

BATCH_SIZE = 500

#: What a record's outcome can be besides its new step.
Outcome = str | Exception


def transition_many(
    records: Any,
    name: str,
    actor: Any = None,
    *,
    authorize: bool = True,
    comment: str = "",
    data: Any = None,
    **accepted: Any,
) -> dict[Any, Outcome]:
    """Move every record of ``records`` that allows ``name``; ``{pk: new step or error}``."""
    workflow = records.model.workflow
    if name not in workflow.transition_names:
        raise LookupError(
            f"{records.model.__name__} has no transition {name!r}; "
            f"its transitions are: {', '.join(workflow.transition_names)}."
        )
    comment, data = log_values.checked(comment, data)  # before any record moves
    call = _Call(name, actor, authorize, comment, data, accepted)
    outcomes: dict[Any, Outcome] = {}
    for batch in _batches(records.order_by("pk")):
        outcomes.update(_move_batch(batch, call))
    return outcomes


class _Call:
    """The arguments of one bulk call, shared by every record it decides."""

    def __init__(self, name, actor, authorize, comment, data, accepted) -> None:
        self.name, self.actor, self.authorize = name, actor, authorize
        self.comment, self.data, self.accepted = comment, data, accepted

    def event(self, step: str, target: str, on_behalf_of: Any = None) -> Event:
        return Event(
            step,
            target,
            self.name,
            Trigger.MANUAL,
            self.actor,
            comment=self.comment,
            data=self.data,
            on_behalf_of=on_behalf_of,
        )


def _batches(records: Any) -> Iterator[list[Any]]:
    """The records, a batch at a time, each batch read whole before it is moved.

    The keys are read first; no cursor stays open while a group commits (on
    SQLite a connection that keeps a reader open cannot commit beside another
    writer, nor can the entries' queued work be written by the ORM broker).
    """
    keys = list(records.values_list("pk", flat=True))
    for start in range(0, len(keys), BATCH_SIZE):
        yield list(records.filter(pk__in=keys[start : start + BATCH_SIZE]))


def _move_batch(batch: list[Any], call: _Call) -> dict[Any, Outcome]:
    outcomes: dict[Any, Outcome] = {}
    groups: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
    for record in batch:
        try:
            decision = engine.decide(record, call.name, call.actor, call.accepted, call.authorize)
        except (WorkflowError, TypeError) as error:
            outcomes[record.pk] = error
            continue
        if _per_record(decision.transition):
            outcomes[record.pk] = _one(record, call)  # its method, a vote or a cascade
        else:
            # one group per holder a delegate acts for: each log row names its own
            guard = tuple(decision.guard.items())
            key = (decision.step, decision.target, guard, decision.on_behalf_of)
            groups[(*key, version_of(record))].append(record)
    for (step, target, guard, on_behalf_of, _version), members in groups.items():
        event = call.event(step, target, on_behalf_of)
        outcomes.update(_move_group(members, step, target, dict(guard), call, event))
    return outcomes


def _per_record(transition: Any) -> bool:
    """Whether a record takes ``transition`` through ``record.transition()`` on its own:
    an ``action`` runs per record, a ``quorum`` call is a vote, a ``cascade`` moves the
    record's own children and counts them on its own log row."""
    return (
        transition.action is not None or quorum(transition) is not None or bool(transition.cascade)
    )


def _one(record: Any, call: _Call) -> Outcome:
    try:
        engine.run_transition(
            record,
            call.name,
            actor=call.actor,
            authorize=call.authorize,
            comment=call.comment,
            data=call.data,
            **call.accepted,
        )
    except Exception as error:  # the record is as it was; the others go on
        return error
    return getattr(record, workflow_of(record).state_attribute)


def _move_group(
    members: list[Any],
    step: str,
    target: str,
    guard: dict[str, Any],
    call: _Call,
    event: Event,
) -> dict[Any, Outcome]:
    """Lock the members still holding ``guard``, move them in one UPDATE; the rest are stale."""
    model, db = type(members[0]), engine.database(members[0])
    workflow = workflow_of(members[0])  # the group's version
    changes = {**engine.entry_changes(workflow, target, timezone.now()), **call.accepted}
    keys = [record.pk for record in members]
    with transaction.atomic(using=db):
        rows = model._base_manager.using(db)
        claim = rows.filter(pk__in=keys, **guard).order_by("pk").select_for_update()
        still = list(claim.values_list("pk", flat=True))
        still_rows = rows.filter(pk__in=still)
        moved = set(engine.move_many(model, still_rows, changes, event, db, workflow))
    return {
        record.pk: target if record.pk in moved else StaleRecord(record, tuple(guard))
        for record in members
    }
