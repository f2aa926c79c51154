"""Transitions and routes: targets, route order, accepted fields, generated method names."""

from __future__ import annotations

import inspect
from typing import Any

from django.db.models import Q
from django.utils.functional import Promise

from ..declaration import RESERVED, Route, Transition
from ..model.compiled import CompiledWorkflow
from ..model.evaluation import lookup_roots, lookups
from ..model.generation import LIBRARY_NAMES, is_generated
from ..model.relations import relation_named
from .common import Messages, error, field, info, where


def check_transitions(model: Any, workflow: CompiledWorkflow) -> Messages:
    declared = [(s, t) for s, step in workflow.steps.items() for t in step.transitions]
    for step_name, transition in [*declared, *(("", t) for t in workflow.from_any_step)]:
        entity = f"transition {transition.name!r}"
        place = where(step_name, entity) if step_name else f"from_any_step, {entity}"
        yield from _check_to_or_routes(model, place, transition)
        yield from check_routes(model, step_name or "from_any_step", entity, transition.routes)
        yield from _check_accept(model, workflow, place, transition)
        yield from _check_when(model, workflow, place, transition)
        if transition.action is not None:
            yield from _check_action(model, place, transition.action)
        yield from _check_quorum(model, workflow.steps.get(step_name), place, transition)
        yield from _check_cascade(model, place, transition.cascade)
    yield from _check_method_names(model, workflow)


def _check_cascade(model: Any, place: str, cascade: Any) -> Messages:
    """E055: ``cascade`` maps reverse relations of the model to transition names; E056: each
    reaches a workflow model; E057: whose workflow declares the transition; I001: one
    reaching the model itself (a tree, perhaps with cycles in its data)."""
    if not cascade:
        return
    if not isinstance(cascade, dict):
        yield error(
            model,
            f"{place} has cascade={cascade!r}.",
            'Map related names to the children\'s transition: cascade={"lines": "void"}.',
            "E055",
        )
        return
    for related_name, name in cascade.items():
        relation = relation_named(model, related_name) if isinstance(related_name, str) else None
        if relation is None:
            names = sorted(r.get_accessor_name() for r in model._meta.related_objects)
            yield error(
                model,
                f"{place} cascades over {related_name!r}, which is no reverse relation of "
                f"{model.__name__}.",
                "Name the related_name of a ForeignKey pointing at this model; it has: "
                f"{', '.join(map(str, names)) or 'none'}.",
                "E055",
            )
            continue
        child = relation.related_model
        workflow = getattr(child, "workflow", None)
        if child._meta.concrete_model is model._meta.concrete_model:
            yield info(
                model,
                f"{place} cascades over {related_name!r} back to {model._meta.label} itself: "
                "a cycle in the data (a record its own parent, two records each the other's) "
                "comes back to a record already moving, which stays where it is; each record "
                "moves at most once per cascade, at any depth.",
                "Nothing to do for a tree; silence django_workflow.I001 once you know it.",
                "I001",
            )
        if not isinstance(workflow, CompiledWorkflow):
            yield error(
                model,
                f"{place} cascades over {related_name!r}, but {child.__name__} has no workflow.",
                f"Make {child.__name__} a WorkflowModel with the transition, or drop "
                f"{related_name!r} from cascade.",
                "E056",
            )
        elif name not in workflow.transition_names:
            yield error(
                model,
                f"{place} cascades {name!r} over {related_name!r}, but {child.__name__} "
                "declares no such transition.",
                f"Name one of {child.__name__}'s transitions: "
                f"{', '.join(workflow.transition_names) or 'it has none'}.",
                "E057",
            )


def _check_quorum(model: Any, step: Any, place: str, transition: Transition) -> Messages:
    """E053: ``quorum`` is a whole number of at least 1; E054: not on a transition out of
    an automatic step, where no person calls it."""
    quorum = transition.quorum
    if quorum is None:
        return
    if not isinstance(quorum, int) or isinstance(quorum, bool) or quorum < 1:
        yield error(
            model,
            f"{place} has quorum={quorum!r}, which is not a whole number of at least 1.",
            "`quorum` is how many different actors must call the transition before it "
            "moves the record, e.g. quorum=2; leave it out for a transition the first call takes.",
            "E053",
        )
    if step is not None and step.is_automatic:
        yield error(
            model,
            f"{place} has a quorum, but its step is automatic: the worker moves the record, "
            "nobody votes.",
            "Declare the transition in a manual step (one without `action`), or drop `quorum`.",
            "E054",
        )


def _check_when(
    model: Any, workflow: CompiledWorkflow, place: str, transition: Transition
) -> Messages:
    """E032: ``when`` is a ``Q`` over the model's fields (or calculations), or a callable;
    ``unmet`` is text, given with a ``when``."""
    when = transition.when
    yield from _check_unmet(model, place, transition)
    if callable(when) and not isinstance(when, Q):
        yield from _check_arity(model, place, when, "E032")
        return
    if when is None:
        return
    if not isinstance(when, Q):
        yield error(
            model,
            f"{place} has when={when!r}.",
            "`when` is a Q object or a callable taking the record.",
            "E032",
        )
        return
    yield from check_own_fields(model, place, when)
    for name in sorted(lookup_roots(when)):
        if field(model, name) is None and name not in workflow.calculations:
            yield error(
                model,
                f"{place}: when reads {name!r}, which is not a field of the model.",
                "Name model fields (or Workflow.calculations) in the Q.",
                "E032",
            )


def _check_unmet(model: Any, place: str, transition: Transition) -> Messages:
    unmet = transition.unmet
    if unmet is None:
        return
    if transition.when is None:
        yield error(
            model,
            f"{place} has unmet={unmet!r} but no when.",
            "`unmet` is what people read when `when` does not hold: add the `when`, or "
            "remove `unmet`.",
            "E032",
        )
    elif not isinstance(unmet, str | Promise) or not str(unmet).strip():
        yield error(
            model,
            f"{place} has unmet={unmet!r}.",
            'Give `unmet` a sentence, e.g. unmet="Attach the receipt first."',
            "E032",
        )


def _check_arity(model: Any, place: str, when: Any, code: str) -> Messages:
    """A callable ``when`` is called with the record alone."""
    try:
        inspect.signature(when).bind(object())
    except TypeError:
        yield error(
            model,
            f"{place}: when={when!r} cannot be called with the record alone.",
            "Write a callable taking one argument, the record: lambda record: record.amount < 50.",
            code,
        )
    except ValueError:  # no signature to read (some builtins): called as given
        return


def check_own_fields(model: Any, place: str, condition: Q) -> Messages:
    """E035: a ``Q`` that follows a relation cannot be decided from the instance."""
    for path in sorted(lookups(condition)):
        root, _, rest = path.partition("__")
        relation = field(model, root)
        if relation is None or not relation.is_relation or not rest:
            continue
        following = rest.split("__")[0]
        if relation.get_lookup(following) is None and relation.get_transform(following) is None:
            yield error(
                model,
                f"{place}: {path!r} follows the relation {root!r}; routes and `when` are "
                "decided on the record's own values (with the call's accepted values).",
                f"Use a callable instead, e.g. lambda record: record.{root}.{following} == ...; "
                "or a calculation.",
                "E035",
            )


def _check_action(model: Any, place: str, action: Any) -> Messages:
    """E033: a transition's ``action`` names a method of the model."""
    if not callable(getattr(model, str(action), None)) or is_generated(
        getattr(model, str(action), None)
    ):
        yield error(
            model,
            f"{place}: action {action!r} is not a method of the model.",
            f"Define `def {action}(self):` on {model.__name__}; it runs inside the transition.",
            "E033",
        )


def _check_to_or_routes(model: Any, place: str, transition: Transition) -> Messages:
    if (transition.to is None) == (not transition.routes):
        yield error(
            model,
            f"{place} must have exactly one of `to` or routes.",
            "Write Transition('name', to='step') or Transition('name', Route(...), ...).",
            "E014",
        )


def check_routes(model: Any, step: str, entity: str, routes: tuple[Any, ...]) -> Messages:
    """E019, E009, E035: routes (of on_success or a transition) are Routes, in a usable
    order, reading the record's own fields."""
    for route in routes:
        if isinstance(route, Route) and isinstance(route.when, Q):
            yield from check_own_fields(model, where(step, entity), route.when)
        elif isinstance(route, Route) and callable(route.when):
            yield from _check_arity(
                model, f"{where(step, entity)}, Route({route.to!r})", route.when, "E019"
            )
        if not isinstance(route, Route):
            yield error(model, f"{where(step, entity)}: {route!r} is not a Route.", "", "E019")
        elif route.when is not None and not (isinstance(route.when, Q) or callable(route.when)):
            yield error(
                model,
                f"{where(step, entity)}: Route({route.to!r}) has when={route.when!r}.",
                "`when` is a Q object or a callable taking the record.",
                "E019",
            )
    unconditional = [i for i, r in enumerate(routes) if isinstance(r, Route) and r.when is None]
    if len(unconditional) > 1 or (unconditional and unconditional[0] != len(routes) - 1):
        yield error(
            model,
            f"{where(step, entity)}: an unconditional Route must be the only one and come last.",
            "Routes are tried in order; routes after an unconditional one can never match.",
            "E009",
        )


def _check_accept(
    model: Any, workflow: CompiledWorkflow, place: str, transition: Transition
) -> Messages:
    for accepted in transition.accept:
        if accepted in RESERVED:
            yield error(
                model,
                f"{place} accepts {accepted!r}, a name every transition call reserves for "
                "its log row.",
                "Accept the field under another name, or pass it as comment=/data= to the call.",
                "E020",
            )
        elif not isinstance(accepted, str) or field(model, accepted) is None:
            yield error(
                model,
                f"{place} accepts {accepted!r}, which is not a field of the model.",
                "List field names in accept=[...].",
                "E020",
            )
        elif accepted in workflow.owned_columns:
            yield error(
                model,
                f"{place} accepts {accepted!r}, which the workflow itself writes.",
                "Remove it from accept=[...].",
                "E020",
            )


def _check_method_names(model: Any, workflow: CompiledWorkflow) -> Messages:
    """E017: each transition name becomes a model method, so it must be free and valid."""
    for name in workflow.transition_names:
        attribute = getattr(model, name, None) if name.isidentifier() else None
        taken = name in LIBRARY_NAMES or (attribute is not None and not is_generated(attribute))
        if not name.isidentifier() or taken:
            yield error(
                model,
                f"transition {name!r} cannot become the method `{model.__name__}.{name}`: "
                "the model already has that attribute, or it is not an identifier.",
                "Rename the transition or the model attribute.",
                "E017",
            )
    for step in workflow.steps.values():
        for transition in step.transitions:
            if not isinstance(transition.name, str):
                yield error(
                    model, f"transition name {transition.name!r} is not a string.", "", "E017"
                )
