"""The workflow models Django has loaded: a low room every other module may ask.

It knows a workflow model by its metaclass, so it imports neither the
``WorkflowModel`` facade nor the engine behind it.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps

from .generation import WorkflowModelBase


def workflow_models(app_configs: Any = None, *, declared: bool = True) -> list[Any]:
    """The concrete workflow models (proxies share their model's); ``declared=False``
    also returns those missing a ``Workflow``, for the checks to report."""
    return [
        model
        for config in app_configs or apps.get_app_configs()
        for model in config.get_models()
        if is_workflow_model(model)
        and not model._meta.proxy
        and (model.workflow is not None or not declared)
    ]


def is_workflow_model(model: Any) -> bool:
    """Whether ``model`` subclasses ``WorkflowModel`` (declared or not)."""
    return isinstance(model, WorkflowModelBase)
