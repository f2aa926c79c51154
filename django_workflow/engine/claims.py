"""Assignment: claiming, releasing and assigning a record (``Workflow.assignment = True``).

Owns the writes of ``assignee`` and ``assigned_at`` outside step changes (every step
change leaving a step clears both in its own ``UPDATE``: ``moves``). Each write is
one guarded ``UPDATE`` and its log row (trigger ``assignment``, ``data`` naming the
assignee) in one transaction, the record staying in its step.

A claim is ``UPDATE … WHERE pk = %s AND state = step AND assignee IS NULL``. On
PostgreSQL a concurrent claim waits for the winner's row lock, then reads the
committed row again and finds it held: it writes nothing and raises
``AlreadyClaimed``. On SQLite the write transaction is the lock.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from ..errors import (
    IDENTIFIERS,
    LABELS,
    AlreadyClaimed,
    StaleRecord,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)
from ..model.columns import ASSIGNED_AT, ASSIGNEE_ID, NEXT_DUE_AT
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from ..policies import allowed
from ..process.pacing import turn
from ..reading import claims_read
from ..scheduling import due_at
from ..work import ReleaseWork, due_instants
from .kind_engines import KindEngine, register
from .moves import apply, database, log_event, write
from .rescheduling import reschedule

CLAIM, RELEASE, ASSIGN = "claim", "release", "assign"


def claim(record: Any, actor: Any, comment: str = "") -> Any:
    """Make ``actor`` the holder of ``record`` if nobody holds it; ``AlreadyClaimed``
    (naming the holder) if someone does, ``WorkflowPermissionDenied`` if the actor may
    call none of the step's transitions."""
    step = _assigning(record, CLAIM)
    if not claims_read.is_user(actor) or not claims_read.may_work_on(record, actor):
        raise WorkflowPermissionDenied(record, CLAIM, actor)
    changes = {ASSIGNEE_ID: actor.pk, ASSIGNED_AT: timezone.now()}
    event = Event(step, step, CLAIM, Trigger.ASSIGNMENT, actor, comment=comment, data=named(actor))
    return _write(record, step, None, changes, event, conflict=_already_claimed(actor))


def release(record: Any, actor: Any, comment: str = "") -> Any:
    """Let go of ``record``: by its holder, someone standing in for them, or an actor the
    ``assign`` policy allows."""
    step = _assigning(record, RELEASE)
    held_by = claims_read.holder_id(record)
    if held_by is None:
        raise TransitionNotAllowed(
            record,
            RELEASE,
            step,
            f"{IDENTIFIERS.record(record)}: nobody holds it.",
            f"{LABELS.record(record)}: nobody holds it.",
        )
    on_behalf_of = claims_read.acting_for(record, actor, database(record))[1]
    if not claims_read.may_release(record, actor):
        raise WorkflowPermissionDenied(record, RELEASE, actor, claimed=True, holder=_held(record))
    event = Event(
        step,
        step,
        RELEASE,
        Trigger.ASSIGNMENT,
        actor,
        comment=comment,
        data=released(record),
        on_behalf_of=on_behalf_of,
    )
    changes = {ASSIGNEE_ID: None, ASSIGNED_AT: None}
    return _write(record, step, held_by, changes, event, conflict=None)


def assign(record: Any, user: Any, actor: Any, authorize: bool = True, comment: str = "") -> Any:
    """Make ``user`` the holder (``None``: nobody), whoever held it: needs the ``assign``
    policy (``Workflow.policies["assign"]``, default the model's change permission)."""
    step = _assigning(record, ASSIGN)
    if user is not None and not claims_read.is_user(user):
        raise TypeError(f"assign() takes a saved user or None, not {user!r}.")
    if authorize and not allowed(claims_read.assign_policy(record), actor, record, ASSIGN):
        raise WorkflowPermissionDenied(record, ASSIGN, actor)
    changes = {
        ASSIGNEE_ID: None if user is None else user.pk,
        ASSIGNED_AT: None if user is None else timezone.now(),
    }
    data = named(user) if user is not None else released(record)
    event = Event(step, step, ASSIGN, Trigger.ASSIGNMENT, actor, comment=comment, data=data)
    return _write(record, step, claims_read.holder_id(record), changes, event, conflict=None)


def holder_check(record: Any, step: str, name: str, actor: Any) -> tuple[dict[str, Any], Any]:
    """In a ``Step(claim=True)``: the guard a call of ``name`` adds (the holder it was
    decided for) and for whom ``actor`` acts; ``WorkflowPermissionDenied`` naming the
    holder when the actor neither holds it nor stands in for who does."""
    if not workflow_of(record).claims(step):
        return {}, None
    may, on_behalf_of = claims_read.acting_for(record, actor, database(record))
    if not may:
        raise WorkflowPermissionDenied(record, name, actor, claimed=True, holder=_held(record))
    return {ASSIGNEE_ID: claims_read.holder_id(record)}, on_behalf_of


def holder_allows(record: Any, actor: Any) -> bool:
    """Whether the holder rule of the record's step lets ``actor`` call its transitions."""
    workflow = workflow_of(record)
    if not workflow.claims(getattr(record, workflow.state_attribute)):
        return True
    return claims_read.acting_for(record, actor, database(record))[0]


def named(user: Any) -> dict[str, Any]:
    """The log row's ``data`` of a claim or an assignment: who holds it now."""
    return {"assignee": user.pk, "assignee_name": str(user)}


def released(record: Any) -> dict[str, Any]:
    """The log row's ``data`` of a release: nobody holds it, and who did."""
    held = _held(record)
    return {"assignee": None, "released": None if held is None else str(held)}


def _assigning(record: Any, name: str) -> str:
    """The step ``record`` is in, when its workflow has ``assignment`` and the step is
    one a person can hold (not terminal)."""
    workflow = workflow_of(record)
    step = getattr(record, workflow.state_attribute)
    if not workflow.assignment:
        raise TransitionNotAllowed(
            record,
            name,
            step,
            f"{record._meta.label} has no holders: declare assignment = True in its "
            "Workflow to claim, release or assign its records.",
            f"Nobody holds {LABELS.model(record)} records.",
        )
    declared = workflow.steps.get(step)
    if declared is None or declared.is_terminal:
        raise TransitionNotAllowed(
            record,
            name,
            step,
            f"{IDENTIFIERS.record(record)}: nobody holds a record in step {step!r}.",
            f"{LABELS.record(record)}: nobody holds a record in {LABELS.step(record, step)}.",
        )
    return step


def _write(
    record: Any, step: str, held_by: Any, changes: dict[str, Any], event: Event, conflict: Any
) -> Any:
    """``changes`` written only if the row is still in ``step`` and held by ``held_by``,
    with the log row; else ``conflict(record, step, holder)`` when the row is in the
    step but held otherwise (a lost claim), ``StaleRecord`` for any other difference. A
    claim that finds the row free after all writes again (``_refuse_unless_free``)."""
    model, db = type(record), database(record)
    guard = {model.workflow.state_attribute: step, ASSIGNEE_ID: held_by}
    changes = with_due(record, changes)
    with transaction.atomic(using=db):
        rows = model._base_manager.using(db).filter(pk=record.pk, **guard)
        while not write(rows, changes, db):  # each turn: another writer committed between
            _refuse_unless_free(record, step, conflict, db)
        apply(record, changes)
        log_event(record, event)
    return record


def _refuse_unless_free(record: Any, step: str, conflict: Any, db: str) -> None:
    """After a guarded write matched nothing: ``conflict(record, step, holder)`` if
    someone holds the row in ``step``, ``StaleRecord`` if it left the step (or for a
    write other than a claim). A claim whose write saw the row held, and whose read sees
    it free (its release committed in between), returns to write again. No row lock: a
    worker releasing the row with ``SKIP LOCKED`` must not pass it over."""
    model = type(record)
    state = model.workflow.state_attribute
    rows = model._base_manager.using(db).filter(pk=record.pk)
    found = rows.values_list(state, ASSIGNEE_ID).first()
    if conflict is None or found is None or found[0] != step:
        raise StaleRecord(record, (state, ASSIGNEE_ID))
    if found[1] is not None:
        raise conflict(record, step, found[1])


def with_due(record: Any, changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` with the ``next_due_at`` they make: a claim starts the clock of the
    step's ``release_after``, a release stops it."""
    if not workflow_of(record).has_deadlines:
        return changes
    return {**changes, NEXT_DUE_AT: due_instants.entering(record, changes)}


def release_due(model: Any, work: Any, pks: list[Any], now: Any, db: str) -> list[Any]:
    """``release_after``: let go of each record whose claim is due at ``now``, each in a
    transaction of its own with its row locked (``SKIP LOCKED``: a worker releasing it,
    or a holder moving it, has it); the write is guarded by the claim's instant, so a
    record claimed again meanwhile keeps its new holder. The keys released."""
    released, idle = [], []
    for pk in pks:
        with turn(db), transaction.atomic(using=db):
            rows = model.workflow.queryset(db).filter(pk=pk)
            record = rows.select_for_update(skip_locked=True).first()
            if record is None:
                continue  # someone else has it now; their write reschedules it
            due = due_at(work, record, now)
            if due is None or due > now:
                idle.append(pk)  # moved or claimed again: its stored instant is stale
                continue
            _release_held(record, work)
            released.append(pk)
    if idle:
        reschedule(model, idle, db, now)
    return released


def _release_held(record: Any, work: Any) -> None:
    step = work.step
    declared = workflow_of(record).steps[step]
    data = {**released(record), "after": str(declared.release_after)}
    event = Event(step, step, RELEASE, Trigger.ASSIGNMENT, None, data=data)
    changes = with_due(record, {ASSIGNEE_ID: None, ASSIGNED_AT: None})
    model, db = type(record), database(record)
    guard = {
        model.workflow.state_attribute: step,
        ASSIGNEE_ID: claims_read.holder_id(record),
        ASSIGNED_AT: getattr(record, ASSIGNED_AT),
    }
    if write(model._base_manager.using(db).filter(pk=record.pk, **guard), changes, db):
        apply(record, changes)
        log_event(record, event)


def _already_claimed(actor: Any) -> Any:
    def conflict(record: Any, step: str, holder_pk: Any) -> AlreadyClaimed:
        holder = get_user_model()._default_manager.filter(pk=holder_pk).first()
        return AlreadyClaimed(record, step, actor, holder)

    return conflict


def _held(record: Any) -> Any:
    return claims_read.holder(record)


register(
    ReleaseWork,
    KindEngine(
        fire=lambda picking, work, records: release_due(
            picking.model, work, [record.pk for record in records], picking.now, picking.db
        )
    ),
)
