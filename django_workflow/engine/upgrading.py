"""Moving running records to another version of their declaration (docs: versions).

A record keeps the version it started on until it is upgraded. An upgrade
locks each record, writes its new version (and its step, where a step of its
version is mapped to one of the target), logs it with the trigger ``upgrade``
and recomputes its deadlines from the unchanged ``state_entered_at``: the entry
instant is the stay's, so nothing fires early, and the fired marks stay, so
nothing fires twice. Nothing is run: an upgrade enters no step, so owed effects
stay owed and no ``on_enter`` runs again. A step kept keeps its votes and its
holder; a step mapped elsewhere ends them, as a step change does.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from django.db import connections, router, transaction
from django.utils import timezone

from ..errors import UnmappedSteps
from ..model.columns import STATE_ENTERED_AT, WORKFLOW_VERSION
from ..model.triggers import Event, Trigger
from ..model.versions import workflow_of
from ..process import meters
from ..reading import attempts_read, claims_read
from ..scheduling import due_at
from ..work import names
from ..work.due_instants import next_due
from . import log_rows
from .log_rows import log_values
from .moves import discard_votes
from .rescheduling import _waits, store
from .sql import upgrade_statements, writes

#: Records locked and moved per transaction.
BATCH_SIZE = 500
#: The name upgrade log rows carry.
UPGRADE = "upgrade"


@dataclass
class Group:
    """The records of one version in one step, and the step of the target they take."""

    version: int
    step: str
    to_step: str
    records: int
    #: Per deadline name: how many of these records' due instants the target changes.
    deadlines_changed: Counter[str] = field(default_factory=Counter)


@dataclass
class UpgradePlan:
    model: Any
    to: int
    groups: list[Group]
    #: ``(version, step)`` of the records whose step the target lacks and no mapping
    #: names, with their counts.
    unmapped: dict[tuple[int, str], int]

    @property
    def records(self) -> int:
        return sum(group.records for group in self.groups)


def target(model: Any, to: int) -> Any:
    """The compiled declaration of version ``to``; ``ValueError`` naming the declared ones."""
    versions = model.workflow.versions
    if versions is None:
        raise ValueError(f"{model._meta.label} declares no versions (Workflow.version).")
    if to not in versions:
        declared = ", ".join(str(number) for number in sorted(versions))
        raise ValueError(f"{model._meta.label} has no version {to}; it declares {declared}.")
    return versions[to]


def candidates(model: Any, to: int, from_version: int | None, db: str) -> Any:
    """The records an upgrade to ``to`` (from ``from_version`` only, when given) moves."""
    rows = model._base_manager.using(db).exclude(**{WORKFLOW_VERSION: to})
    if from_version is not None:
        rows = rows.filter(**{WORKFLOW_VERSION: from_version})
    return rows


def plan(
    model: Any,
    to: int,
    *,
    from_version: int | None = None,
    steps: Mapping[str, str] | None = None,
    using: str | None = None,
    deadlines: bool = False,
) -> UpgradePlan:
    """What an upgrade would move, per (version, step → step), and what it cannot; with
    ``deadlines``, the due instants it would change (reads every record concerned)."""
    goal = target(model, to)
    steps = _checked_mapping(model, goal, steps)
    db = using or router.db_for_write(model)
    state = model.workflow.state_attribute
    rows = candidates(model, to, from_version, db)
    counts = Counter(rows.values_list(WORKFLOW_VERSION, state))
    groups, unmapped = [], {}
    for (version, step), count in sorted(counts.items()):
        to_step = steps.get(step, step)
        if to_step not in goal.steps:
            unmapped[(version, step)] = count
        else:
            groups.append(Group(version, step, to_step, count))
    if deadlines:
        for group in groups:
            _count_changed_deadlines(model, goal, group, rows, db)
    return UpgradePlan(model, to, groups, unmapped)


def _checked_mapping(model: Any, goal: Any, steps: Mapping[str, str] | None) -> dict[str, str]:
    steps = dict(steps or {})
    wrong = sorted(new for new in steps.values() if new not in goal.steps)
    if wrong:
        raise ValueError(
            f"{model._meta.label}: version {goal.version} has no step "
            f"{', '.join(map(repr, wrong))}; its steps are {', '.join(goal.steps)}."
        )
    return steps


def _count_changed_deadlines(model: Any, goal: Any, group: Group, rows: Any, db: str) -> None:
    state = model.workflow.state_attribute
    now = timezone.now()
    for record in rows.filter(**{WORKFLOW_VERSION: group.version, state: group.step}).iterator():
        before = {w.entity: due_at(w, record, now) for w in _deadlines(workflow_of(record), record)}
        _put(record, _changes(goal, group.step, group.to_step))
        after = {w.entity: due_at(w, record, now) for w in _deadlines(goal, record)}
        for name in before.keys() | after.keys():
            if before.get(name) != after.get(name):
                group.deadlines_changed[name] += 1


def _deadlines(workflow: Any, record: Any) -> tuple[Any, ...]:
    return workflow.deadline_works.get(getattr(record, workflow.state_attribute), ())


def upgrade(
    model: Any,
    to: int,
    *,
    from_version: int | None = None,
    steps: Mapping[str, str] | None = None,
    actor: Any = None,
    batch_size: int = BATCH_SIZE,
    using: str | None = None,
    pks: Iterable[Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Move the records not on ``to`` (of ``from_version`` only, when given; of ``pks``
    only, when given) to version ``to``, a locked batch per transaction; how many moved.

    Raises ``UnmappedSteps``, moving nothing, when a record is in a step the target
    lacks and ``steps`` maps nowhere. ``progress(moved so far, total)`` follows each batch.
    """
    db = using or router.db_for_write(model)
    goal = target(model, to)
    steps = _checked_mapping(model, goal, steps)
    rows = candidates(model, to, from_version, db)
    if pks is not None:
        rows = rows.filter(pk__in=list(pks))
    found = plan(model, to, from_version=from_version, steps=steps, using=db)
    if pks is not None:
        found = _only(found, model, rows, goal, steps)
    if found.unmapped:
        raise UnmappedSteps(model, to, found.unmapped)
    keys = list(rows.order_by("pk").values_list("pk", flat=True))
    retries = _retries(model, db)
    statements = _statements(model, goal, found.groups, actor, retries, db)
    move = partial(_upgrade_batch, model, goal, rows, steps, actor, retries, db)
    if statements is not None:  # nothing to read: each (version, step) one statement
        move = partial(_by_statements, model, statements, rows, move, db)
    moved = 0
    for start in range(0, len(keys), batch_size):
        batch = keys[start : start + batch_size]
        moved += move(batch[0], batch[-1])
        if progress is not None:
            progress(moved, len(keys))
    return moved


@dataclass
class Statement:
    """One (version, step) of an upgrade written by a statement alone: the guard its rows
    hold, what it writes, the due instant's expression, its event and log row."""

    guard: dict[str, Any]
    changes: dict[str, Any]
    due: tuple[str, list[Any]] | None
    event: Event
    log: dict[str, Any] | None


def _statements(
    model: Any, goal: Any, groups: list[Group], actor: Any, retries: bool, db: str
) -> list[Statement] | None:
    """The statements of an upgrade that reads no record: on PostgreSQL, while nobody
    listens to the log's save signals, no deadline waits for a retry, no votes are
    discarded and each target step's due instant is an expression of the row; else
    ``None`` (each batch is locked, read and computed in Python)."""
    if connections[db].vendor != "postgresql" or retries or not writes.logs_quietly():
        return None
    statements = []
    for group in groups:
        if group.to_step != group.step and model.workflow.has_votes:
            return None
        changes = _changes(goal, group.step, group.to_step)
        due = None
        if model.workflow.has_deadlines:
            works = goal.deadline_works.get(group.to_step, ())
            due = upgrade_statements.due_expression(model, works, changes, db)
            if due is None:
                return None
        event = _event(group.version, group.step, group.to_step, goal, actor)
        log = log_values(model, 0, event, db) if model.workflow.log is True else None
        guard = {WORKFLOW_VERSION: group.version, model.workflow.state_attribute: group.step}
        statements.append(Statement(guard, changes, due, event, log))
    return statements


def _by_statements(
    model: Any,
    statements: list[Statement],
    rows: Any,
    locking: Callable[[Any, Any], int],
    db: str,
    first: Any,
    last: Any,
) -> int:
    """A batch of keys from ``first`` to ``last``, each planned (version, step) by its
    statement; records that moved to another step since the plan are then read, locked
    (``locking``)."""
    moved = 0
    with transaction.atomic(using=db):
        for s in statements:
            count = upgrade_statements.move_range(
                model, first, last, s.due, s.changes, s.guard, s.log, db
            )
            if count:
                meters.moved(model, s.event, db, count)
            moved += count
    if rows.filter(pk__gte=first, pk__lte=last).exists():
        moved += locking(first, last)
    return moved


def _event(version: int, step: str, to_step: str, goal: Any, actor: Any) -> Event:
    data = {"from_version": version, "to_version": goal.version}
    return Event(step, to_step, UPGRADE, Trigger.UPGRADE, actor, data=data)


def _retries(model: Any, db: str) -> bool:
    """Whether a deadline of ``model`` has an attempt row, waiting for its retry or halted:
    the due instants then mind them (``rescheduling._waits``); read once per upgrade."""
    if not model.workflow.has_deadlines:
        return False
    return attempts_read.rows(model, db).exclude(work__startswith=names.STEP_PREFIX).exists()


def _only(found: UpgradePlan, model: Any, rows: Any, goal: Any, steps: dict[str, str]) -> Any:
    """The plan for the records of ``rows`` alone."""
    state = model.workflow.state_attribute
    counts = Counter(rows.values_list(WORKFLOW_VERSION, state))
    unmapped = {
        key: count for key, count in counts.items() if steps.get(key[1], key[1]) not in goal.steps
    }
    return UpgradePlan(model, goal.version, found.groups, unmapped)


def _upgrade_batch(
    model: Any,
    goal: Any,
    rows: Any,
    steps: dict[str, str],
    actor: Any,
    retries: bool,
    db: str,
    first: Any,
    last: Any,
) -> int:
    """Lock the records from key ``first`` to ``last`` still to be moved and move them, a
    (version, step) at a time: the new version and step, the due instants, the votes of
    steps left, the log. A step that became one the target lacks since the plan stays."""
    state = model.workflow.state_attribute
    now = timezone.now()
    moved = 0
    with transaction.atomic(using=db):
        locked = rows.filter(pk__gte=first, pk__lte=last).order_by("pk").select_for_update()
        records = list(locked)
        groups: dict[tuple[int, str], list[Any]] = defaultdict(list)
        for record in records:
            groups[(getattr(record, WORKFLOW_VERSION), getattr(record, state))].append(record)
        waits = _waits(model, records, now, db) if retries else {}
        for (version, step), members in groups.items():
            to_step = steps.get(step, step)
            if to_step not in goal.steps:  # entered since the plan: left for the next run
                continue
            moved += len(members)
            changes = _changes(goal, step, to_step)
            for record in members:
                _put(record, changes)
            event = _event(version, step, to_step, goal, actor)
            guard = {WORKFLOW_VERSION: version, state: step}
            _write_group(model, members, changes, guard, event, waits, now, db)
            if to_step != step and model.workflow.has_votes:
                discard_votes([r.pk for r in members], model, db)
    return moved


def _write_group(
    model: Any,
    members: list[Any],
    changes: dict[str, Any],
    guard: dict[str, Any],
    event: Event,
    waits: dict[Any, Any],
    now: Any,
    db: str,
) -> None:
    """One (version, step) of a batch: on PostgreSQL one statement (``upgrade_statements``)
    while nobody listens to the log's save signals; elsewhere an ``UPDATE``, the due
    instants where they changed, and the log rows."""
    keys = [record.pk for record in members]
    if connections[db].vendor == "postgresql" and writes.logs_quietly():
        dues = None
        if model.workflow.has_deadlines:
            dues = [next_due(record, now, waits.get(record.pk)) for record in members]
        log = log_values(model, keys[0], event, db) if model.workflow.log is True else None
        upgrade_statements.move_group(model, keys, dues, changes, guard, log, db)
        meters.moved(model, event, db, len(keys))
        return
    model._base_manager.using(db).filter(pk__in=keys, **guard).update(**changes)
    if model.workflow.has_deadlines:
        store(model, members, db, now, waits)
    log_rows.write(model, [(record.pk, _stay(event, record)) for record in members], db)


def _stay(event: Event, record: Any) -> Event:
    return replace(event, from_state_entered_at=getattr(record, STATE_ENTERED_AT))


def _changes(goal: Any, step: str, to_step: str) -> dict[str, Any]:
    """What moving a record of ``step`` to ``goal``'s ``to_step`` writes: the version and,
    for a step mapped elsewhere, the step, its fresh fired columns and the holder let go.
    The entry instant stays: the stay goes on."""
    changes: dict[str, Any] = {WORKFLOW_VERSION: goal.version}
    if to_step != step:
        changes[goal.state_attribute] = to_step
        changes.update(dict.fromkeys(goal.fired_fields(to_step)))
        changes = claims_read.leaving(goal, step, changes)
    return changes


def _put(record: Any, changes: dict[str, Any]) -> None:
    """The written values on the instance, which the due instants are computed from (no
    ``moves.apply``: these instances are not saved again)."""
    for name, value in changes.items():
        setattr(record, name, value)


def upgrade_record(record: Any, to: int, steps: Mapping[str, str] | None, actor: Any) -> Any:
    """``record.workflow.upgrade``: move this record to version ``to``; the record is read
    again afterwards. ``UnmappedSteps`` when its step needs a mapping ``steps`` lacks."""
    model = type(record)
    db = record._state.db or router.db_for_write(model, instance=record)
    upgrade(model, to, steps=steps, actor=actor, using=db, pks=[record.pk])
    record.refresh_from_db(using=db)
    return record
