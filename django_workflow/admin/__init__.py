"""The workflow admin: ``WorkflowAdminMixin`` for a workflow model's ``ModelAdmin``, the
read-only transition log, the "Workflows" overview and "My work".

Django's admin autodiscovery imports this package, which registers the log's admin and
the overview's. The rooms, each with what it owns:

- ``mixin``: ``WorkflowAdminMixin`` (changelist, change page panel), its status filter;
- ``transitions``: the views moving one record (transition, undo, retry) and the
  extension points deciding what a button offers and asks;
- ``actions``: the changelist's transition actions and their confirmation page;
- ``forms``: the reason form, the accepted values a form asks for;
- ``log``: ``TransitionLogAdmin``;
- ``deliveries``: ``EventDeliveryAdmin``, the events delivered from outside (read-only);
- ``overview``: ``WorkflowOverviewAdmin``, the "Workflows" page;
- ``my_work``: the "My work" page;
- ``joins``: the panel's progress of a parent waiting in a join step;
- ``holding``: holders (``Workflow.assignment``): the changelist's filter and column,
  "My work"'s sections, Claim and Release, ``AbsenceAdmin`` (registered on import);
- ``display``: deadlines, spans and time in step in words; ``site``: the models a user
  may view, a model's admin URLs, the filters carried between pages.
"""

from .actions import (
    CHANGE_LIST,
    BulkReport,
    asks_values,
    foresee,
    transition_action,
)
from .deliveries import EventDeliveryAdmin
from .display import KINDS, NOTHING, describe_deadline, rendered
from .forms import CommentForm
from .holding import AbsenceAdmin, HolderFilter
from .log import TransitionFilter, TransitionLogAdmin, WorkflowModelFilter
from .mixin import WorkflowAdminMixin, WorkflowStatusFilter
from .my_work import my_work_view
from .overview import WorkflowOverviewAdmin

__all__ = [
    "CHANGE_LIST",
    "KINDS",
    "NOTHING",
    "AbsenceAdmin",
    "BulkReport",
    "CommentForm",
    "EventDeliveryAdmin",
    "HolderFilter",
    "TransitionFilter",
    "TransitionLogAdmin",
    "WorkflowAdminMixin",
    "WorkflowModelFilter",
    "WorkflowOverviewAdmin",
    "WorkflowStatusFilter",
    "asks_values",
    "describe_deadline",
    "foresee",
    "my_work_view",
    "rendered",
    "transition_action",
]
