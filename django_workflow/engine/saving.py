"""``save()`` and creation: a record's own fields, and entering the initial step."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db import router, transaction

from ..errors import (
    DirectStepChange,
)
from ..model.columns import NEXT_DUE_AT
from ..model.compiled import CompiledWorkflow
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from ..work import due_instants, rearming
from . import log_rows
from .action_saves import COLLECTING, prepared
from .moves import Moved, database, follow
from .rescheduling import reschedule


def create_record(
    record: Any, save: Callable[..., None], args: Any, fields: Any, kwargs: Any
) -> None:
    """``save()`` that inserts: the record enters its initial step, logged and announced.

    An instance given the key of an existing row is inserted, never updated:
    updating would rewind that record to the initial step.
    """
    if record.pk is not None and not kwargs.get("force_update"):
        kwargs = {**kwargs, "force_insert": True}
    starting(record)
    db = kwargs.get("using") or router.db_for_write(type(record), instance=record)
    with transaction.atomic(using=db):  # the row, its log row and what its entry owes
        save(*args, update_fields=fields, **kwargs)
        rearming.remember(record)
        records_created([record], using=record._state.db)


def starting(record: Any) -> None:
    """Put on a new instance the ``next_due_at`` of its initial step."""
    workflow = workflow_of(record)
    if workflow.has_deadlines and workflow.initial_step is not None:
        entry = {workflow.state_attribute: workflow.initial_step}
        setattr(record, NEXT_DUE_AT, due_instants.entering(record, entry))


def save_record(
    record: Any, save: Callable[..., None], args: Any, fields: Any, kwargs: Any
) -> None:
    """``save()`` of an existing record: its own fields, never the workflow's columns.

    Assigning another step raises ``DirectStepChange``; an anchor moved later
    re-arms its action timeouts, and a changed due instant is stored, guarded
    by the step the instance was loaded in.
    """
    workflow: CompiledWorkflow = workflow_of(record)
    db = kwargs.get("using") or database(record)
    loaded = _loaded_step(record, db)
    step = getattr(record, workflow.state_attribute)
    if loaded is not None and step != loaded:
        raise DirectStepChange(record, loaded, step)
    guarded = dict.fromkeys(rearming.moved_anchors(record))
    for column in guarded:
        setattr(record, column, None)
    due = _due_if_changed(record, loaded)
    if due is not None:
        setattr(record, NEXT_DUE_AT, due[0])
        guarded[NEXT_DUE_AT] = due[0]
    fields = _own_fields(record, fields)
    collecting = record.__dict__.get(COLLECTING)
    if collecting is not None:  # the engine writes it (``saved_by``)
        collecting.update({**prepared(record, fields), **guarded})
        return
    with transaction.atomic(using=db, savepoint=False):  # a firing's transaction is enough
        if fields:
            save(*args, update_fields=fields, **kwargs)
        if guarded and loaded is not None:
            rows = type(record)._base_manager.using(db).filter(pk=record.pk)
            rows.filter(**{workflow.state_attribute: loaded}).update(**guarded)
    rearming.remember(record)


def _due_if_changed(record: Any, loaded: str | None) -> tuple[Any] | None:
    """``(due,)`` when the instance's deadlines fall due at another instant than stored."""
    if loaded is None or not workflow_of(record).has_deadlines:
        return None
    due = due_instants.next_due(record)
    if NEXT_DUE_AT not in record.__dict__:  # deferred: the stored value is unknown
        return (due,)
    return None if due == record.__dict__[NEXT_DUE_AT] else (due,)


def _loaded_step(record: Any, db: str) -> str | None:
    """The step the instance was loaded in; read again when it was deferred, then assigned."""
    loaded = rearming.loaded_step(record)
    attribute = workflow_of(record).state_attribute
    if loaded is None and attribute in record.__dict__:
        rows = type(record)._base_manager.using(db).filter(pk=record.pk)
        loaded = rows.values_list(attribute, flat=True).first()
    return loaded


def _own_fields(record: Any, fields: Iterable[str] | None) -> list[str]:
    """The fields a save writes, less the workflow's columns and any deferred field."""
    owned = workflow_of(record).owned_columns
    if fields is None:
        deferred = record.get_deferred_fields()
        fields = [
            field.name
            for field in record._meta.concrete_fields
            if not field.primary_key
            and not getattr(field, "generated", False)
            and field.attname not in deferred
        ]
    by_attname = {f.attname: f.name for f in record._meta.concrete_fields}
    return [name for name in fields if by_attname.get(name, name) not in owned]


def update_rows(rows: Any, values: dict[str, Any], update: Callable[..., int]) -> int:
    """``QuerySet.update()`` of a workflow model: ``update`` writes ``values`` with the fired
    columns whose anchor they move later cleared, and the due instants of the rows follow
    when what they count from moved."""
    workflow: CompiledWorkflow = rows.model.workflow
    values = rearming.rearm_in_update(workflow, values)
    if not (workflow.has_deadlines and due_instants.moved_by(rows.model, values)):
        return update(**values)
    with transaction.atomic(using=rows.db):  # the due instants move with the values
        keys = list(rows.values_list("pk", flat=True))
        count = update(**values)
        reschedule(rows.model, keys, rows.db)
    return count


def records_created(records: list[Any], using: str | None = None) -> None:
    """Log the entry into the initial step and queue it when it is automatic."""
    if not records:
        return
    db = using or database(records[0])
    model = type(records[0])
    log_rows.write(model, [(record.pk, _initial(record)) for record in records], db)
    by_step: dict[str, list[Any]] = {}
    for record in records:
        by_step.setdefault(getattr(record, model.workflow.state_attribute), []).append(record)
    single = records[0] if len(records) == 1 else None  # the caller's, to follow its record
    for step, entered in by_step.items():
        events = [(record.pk, _initial(record)) for record in entered]
        instances = {record.pk: record for record in entered}
        moved = Moved(model, db, step, events, instances, caller=single, ends_stay=False)
        follow(moved, logged=True)


def _initial(record: Any) -> Event:
    return Event("", record.workflow.current_step, "", Trigger.INITIAL)
