"""``actionable_by(actor)``: the records on which ``actor`` has an available action.

Built from the declaration, not by asking each record: for every step, each
transition it offers (its own and ``from_any_step``'s, as
``transitions_in`` lists them) contributes ``policy.q(actor) & when``, and
a step's branch is ``state = step AND (any of those)``. Steps with the same
condition share one ``state IN (…)`` branch; the branches are ORed into one
filter on the state column's index. A branch that follows a to-many
relation goes into a ``pk IN (subquery)``, so no row is returned twice.

A ``quorum`` transition the actor already voted for in the record's stay offers
nothing to them: its branch also says ``NOT EXISTS`` (their vote), so a record
whose every offered transition they voted for is not listed.

When a policy in play has no exact filter for the actor (a custom policy
without ``q``; ``has_perm`` where an object-permission backend may grant some
records) or a ``when`` is a callable, that transition's records are narrowed
as far as SQL can (its step, its ``when`` if a ``Q``, the filterable parts of
the policy) and the rest is asked record by record: one row read and one
policy call per candidate, the ``Q`` guards read in the same query.

With ``Workflow.assignment``, the same query keeps the records nobody holds
(in a ``claim=True`` step: the ones to claim) and those held by the actor or
by someone the actor stands in for (an active ``Absence``, a subquery).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db.models import BooleanField, ExpressionWrapper, Q

from ..model.evaluation import lookup_roots, lookups
from ..policies import (
    EVERYTHING,
    NOTHING,
    Narrowing,
    allowed,
    allows_everything,
    allows_nothing,
    both,
    either,
    narrowing,
)
from . import claims_read
from .votes_read import not_voted

#: Rows read per fetch while asking the candidates of the fallback one by one.
CHUNK_SIZE = 2000


@dataclass
class Plan:
    """What SQL says of one model for one actor."""

    #: Records that certainly have an available action.
    exact: Q = NOTHING
    #: Records that may have one: the candidates asked in Python.
    loose: Q = NOTHING
    #: Per step, the transitions a candidate in it is asked about, with the name of
    #: the annotation holding its ``when`` (``None``: nothing to read).
    asked: dict[str, list[tuple[Any, str | None]]] = field(default_factory=dict)
    #: ``when`` guards of asked transitions, by annotation name.
    guards: dict[str, Q] = field(default_factory=dict)
    #: The calculations the filters read.
    calculations: set[str] = field(default_factory=set)


def actionable(queryset: Any, actor: Any) -> Any:
    """``queryset`` narrowed to the records on which ``actor`` has an available action."""
    model = queryset.model
    plan = plan_for(model, actor)
    rows = _aliased(queryset, model, plan.calculations)
    if allows_nothing(plan.loose) or allows_everything(plan.exact):
        found = plan.exact
    else:
        found = either(plan.exact, Q(pk__in=_survivors(rows, plan, actor)))
    if allows_nothing(found):
        return rows.none()
    if model.workflow.assignment:  # in the same query: never a record held by another
        found = both(found, claims_read.unheld() | claims_read.held_for(actor))
    return rows.filter(found)


def plan_for(model: Any, actor: Any) -> Plan:
    """Every declared step's branch, exact or to be asked, for ``actor``."""
    workflow = model.workflow
    plan = Plan()
    narrowed: dict[int, Narrowing] = {}
    exact: dict[str, list[Q]] = {}
    loose: dict[str, list[Q]] = {}
    for step in workflow.steps:
        # per policy, the guards of its transitions: the policy's filter is said once
        sure: dict[int, tuple[Q, list[Q]]] = {}
        unsure: dict[int, tuple[Q, list[Q]]] = {}
        for transition in workflow.transitions_in(step):
            policy = workflow.policy_for(step, transition.name)
            if id(policy) not in narrowed:
                narrowed[id(policy)] = narrowing(policy, actor)
            by_policy = narrowed[id(policy)]
            when, when_exact = _when(transition.when)
            if allows_nothing(by_policy.q):
                continue
            if isinstance(transition.when, Q):
                plan.calculations |= lookup_roots(transition.when) & set(workflow.calculations)
            condition = both(when, not_voted(model, transition, actor))
            if by_policy.exact and when_exact:
                sure.setdefault(id(policy), (by_policy.q, []))[1].append(condition)
            else:
                unsure.setdefault(id(policy), (by_policy.q, []))[1].append(condition)
                guard = _guard(plan, condition)
                plan.asked.setdefault(step, []).append((transition, guard))
        if sure:
            exact[step] = [both(q, _any_guard(whens)) for q, whens in sure.values()]
        if unsure:
            loose[step] = [both(q, _any_guard(whens)) for q, whens in unsure.values()]
    plan.exact = _branches(model, exact, plan.calculations)
    plan.loose = _branches(model, loose, plan.calculations)
    return plan


def _any_guard(whens: list[Q]) -> Q:
    """The guards ORed, each ``Q`` object once (transitions may share one)."""
    unique = list({id(when): when for when in whens}.values())
    return either(*unique)


def _when(when: Any) -> tuple[Q, bool]:
    """A ``when`` as a filter, and whether the filter says all of it."""
    if when is None:
        return EVERYTHING, True
    if isinstance(when, Q):
        return when, True
    return EVERYTHING, False  # a callable: asked per record


def _guard(plan: Plan, condition: Q) -> str | None:
    """Name the annotation that reads what SQL says of an asked transition: its ``Q``
    guard, and that the actor has not voted for it yet; ``None`` when nothing."""
    if allows_everything(condition):
        return None
    name = f"_workflow_when_{len(plan.guards)}"
    plan.guards[name] = condition
    return name


def _branches(model: Any, by_step: dict[str, list[Q]], calculations: set[str]) -> Q:
    """``state IN (steps) AND condition`` per distinct condition, ORed."""
    groups: list[tuple[Q, list[str]]] = []
    for step, conditions in by_step.items():
        condition = either(*conditions)
        for shared, steps in groups:
            if shared == condition:
                steps.append(step)
                break
        else:
            groups.append((condition, [step]))
    state = model.workflow.state_attribute
    return either(
        *(
            _without_repeats(model, both(_in_steps(state, steps), condition), calculations)
            for condition, steps in groups
        )
    )


def _in_steps(state: str, steps: list[str]) -> Q:
    return Q(**{state: steps[0]}) if len(steps) == 1 else Q(**{f"{state}__in": steps})


def _without_repeats(model: Any, condition: Q, calculations: set[str]) -> Q:
    """``condition``, or ``pk IN (rows meeting it)`` when it follows a to-many relation:
    joined into an OR, such a relation would return a row once per related row."""
    if not any(_spawns_duplicates(model, path) for path in lookups(condition)):
        return condition
    rows = _aliased(model._base_manager.all(), model, calculations)
    return Q(pk__in=rows.filter(condition).values("pk"))


@cache
def _spawns_duplicates(model: Any, path: str) -> bool:
    options = model._meta
    for part in path.split("__"):
        try:
            found = options.get_field(part)
        except FieldDoesNotExist:
            return False  # a lookup (``__in``) or a calculation: the path ends here
        if not found.is_relation:
            return False
        if found.many_to_many or found.one_to_many:
            return True
        options = found.related_model._meta
    return False


def _aliased(queryset: Any, model: Any, names: set[str]) -> Any:
    """``queryset`` with the calculations ``names`` aliased (unless already there)."""
    calculations = model.workflow.calculations
    missing = {n: calculations[n] for n in sorted(names) if n not in queryset.query.annotations}
    return queryset.alias(**missing) if missing else queryset


def _survivors(rows: Any, plan: Plan, actor: Any) -> list[Any]:
    """The keys of the candidates that an asked transition allows ``actor`` on.

    Candidates already in ``plan.exact`` are left out; each other one is read
    once, its ``Q`` guards computed by the same query, and its policies called.
    """
    candidates = rows.filter(plan.loose)
    if not allows_nothing(plan.exact):
        candidates = candidates.exclude(pk__in=rows.filter(plan.exact).values("pk"))
    if plan.guards:
        candidates = candidates.annotate(
            **{
                name: ExpressionWrapper(guard, output_field=BooleanField())
                for name, guard in plan.guards.items()
            }
        )
    workflow = rows.model.workflow
    return [
        record.pk
        for record in candidates.iterator(chunk_size=CHUNK_SIZE)
        if _allows(record, workflow, plan, actor)
    ]


def _allows(record: Any, workflow: Any, plan: Plan, actor: Any) -> bool:
    """What ``available_actions`` asks of one asked transition: its ``when``, then its policy."""
    step = record.workflow.current_step
    for transition, guard in plan.asked.get(step, ()):
        holds = guard is None or bool(getattr(record, guard))
        if holds and transition.when is not None and not isinstance(transition.when, Q):
            holds = bool(transition.when(record))
        policy = workflow.policy_for(step, transition.name)
        if holds and allowed(policy, actor, record, transition.name):
            return True
    return False
