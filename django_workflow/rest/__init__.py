"""Django REST framework endpoints for a workflow model (``pip install "dj-workflow[rest]"``).

``WorkflowViewSetMixin`` adds two actions to a ``ModelViewSet`` of a
workflow model:

- ``GET …/{pk}/workflow/``: the record's step, what the requester may call,
  its pending deadlines and its recent history;
- ``POST …/{pk}/transitions/{transition}/``: run a transition with the
  values it accepts, a ``comment`` and ``data``; answers with the new state.

Both go through the viewset's own ``get_object()``, so its queryset and its
permission classes apply; a transition also needs the workflow's policy.
Errors are JSON naming the transition and the reason (see docs/rest.md).

The rooms: ``answers`` (what the endpoints answer), ``bodies`` (what a
transition takes), ``viewset`` (the two actions), ``permissions`` and
``schema`` (the OpenAPI description of each viewset's own transitions,
registered with drf-spectacular on import).

The rest of the package never imports this one: Django REST framework and
drf-spectacular are needed only by projects that use it.
"""

from .answers import (
    WorkflowActionSerializer,
    WorkflowDeadlineSerializer,
    WorkflowErrorSerializer,
    WorkflowHistoryRowSerializer,
    WorkflowStateErrorSerializer,
    WorkflowStateSerializer,
)
from .bodies import (
    WorkflowCallSerializer,
    WorkflowTransitionSerializer,
    transition_serializer,
)
from .permissions import WorkflowModelPermissions
from .schema import WorkflowViewSetSchema
from .viewset import WorkflowViewSetMixin

__all__ = [
    "WorkflowActionSerializer",
    "WorkflowCallSerializer",
    "WorkflowDeadlineSerializer",
    "WorkflowErrorSerializer",
    "WorkflowHistoryRowSerializer",
    "WorkflowModelPermissions",
    "WorkflowStateErrorSerializer",
    "WorkflowStateSerializer",
    "WorkflowTransitionSerializer",
    "WorkflowViewSetMixin",
    "WorkflowViewSetSchema",
    "transition_serializer",
]
