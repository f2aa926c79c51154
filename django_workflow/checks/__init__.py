"""The verifiers: ``manage.py check`` rejects declarations that cannot work.

One module per rule family, each a few functions returning ``CheckMessage``s
that name the model, the step and the entity, with a hint. The IDs are listed
in ``docs/checks.md`` and never reused.
"""

from __future__ import annotations

from typing import Any

from django.core import checks

from ..model.registry import workflow_models
from .assignment_checks import check_assignment
from .common import error
from .deadlines_checks import check_deadlines
from .deployment_checks import check_deployment
from .events_checks import check_events
from .evolution_checks import check_deploy_records
from .graph_checks import check_reachable, check_references
from .joins_checks import check_joins
from .options_checks import check_options, check_own_fields
from .policies_checks import check_policies
from .records_checks import check_records
from .slas_checks import check_slas
from .steps_checks import check_steps
from .transitions_checks import check_transitions
from .transport_checks import check_transport
from .undo_checks import check_undo
from .versions_checks import check_deploy_versions, check_versions, previous_versions

__all__ = [
    "RULES",
    "check_deploy_records",
    "check_deploy_versions",
    "check_deployment",
    "check_model",
    "check_records",
    "check_workflows",
]

#: Every rule family run on each workflow model, in this order.
RULES = (
    check_options,
    check_own_fields,
    check_steps,
    check_transitions,
    check_deadlines,
    check_undo,
    check_joins,
    check_references,
    check_reachable,
    check_policies,
    check_assignment,
    check_slas,
    check_events,
    check_versions,
)


def check_workflows(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Every workflow model's declaration; the deployment settings on a whole-project check."""
    messages: list[checks.CheckMessage] = []
    models = workflow_models(app_configs, declared=False)
    for model in models:
        messages.extend(check_model(model))
    if models and app_configs is None:
        messages.extend(check_deployment(models))
        messages.extend(check_transport())
    return messages


def check_model(model: Any) -> list[checks.CheckMessage]:
    """Every message for one workflow model."""
    import_error = model.__dict__.get("_workflow_import_error")
    if import_error is not None:
        return [error(model, f"the declaration could not be read: {import_error!r}.", "", "E002")]
    workflow = model.workflow
    if workflow is None:
        return [
            error(
                model,
                "subclasses WorkflowModel but declares no inner `class Workflow:`.",
                "Declare the steps in an inner `class Workflow:`, or make the model abstract.",
                "E002",
            )
        ]
    messages: list[checks.CheckMessage] = []
    for rule in RULES:
        try:
            messages.extend(rule(model, workflow))
        except Exception as problem:  # a declaration too odd for a rule still gets reported
            messages.append(
                error(model, f"the declaration could not be checked: {problem!r}.", "", "E002")
            )
    try:
        messages.extend(previous_versions(model, workflow, RULES[:-1]))
    except Exception as problem:
        messages.append(
            error(model, f"a previous version could not be checked: {problem!r}.", "", "E002")
        )
    return messages
