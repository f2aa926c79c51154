"""The admin's "My work" page: the logged-in user's inbox, in the models they may view.

A view of its own module, wired into the "Workflows" overview's URLs; it is
handed the admin site and the admin's way of describing a deadline, so it
never imports the admin module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.admin.utils import quote
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.text import capfirst

from .inbox import InboxItem, inbox
from .workflow_model import workflow_models

#: Rows on the page: the soonest deadlines first, so the rest can wait.
PAGE_SIZE = 100


def my_work_view(
    request: HttpRequest, *, admin_site: Any, describe: Callable[..., str]
) -> TemplateResponse:
    """The records the user can act on, soonest deadline first, each linking to its
    change page; ``describe(deadline, record, now)`` words a deadline as the admin does."""
    now = timezone.now()
    items = inbox(request.user, now, limit=PAGE_SIZE, models=viewable(admin_site, request))
    context = {
        **admin_site.each_context(request),
        "title": "My work",
        "rows": [_row(item, admin_site, describe, now) for item in items],
        "limit": PAGE_SIZE,
    }
    return TemplateResponse(request, "admin/django_workflow/my_work.html", context)


def viewable(admin_site: Any, request: HttpRequest) -> list[Any]:
    """The workflow models registered on ``admin_site`` whose records the user may view."""
    registry = admin_site._registry
    return [
        model
        for model in workflow_models()
        if model in registry and registry[model].has_view_or_change_permission(request)
    ]


def _row(item: InboxItem, admin_site: Any, describe: Callable[..., str], now: Any) -> dict:
    record, workflow = item.record, item.model.workflow
    info = item.model._meta.app_label, item.model._meta.model_name
    return {
        "item": item,
        "name": capfirst(item.model._meta.verbose_name),
        "label": item.model._meta.label,
        "url": reverse(f"{admin_site.name}:{info[0]}_{info[1]}_change", args=[quote(record.pk)]),
        "deadline": _deadline(item, describe, now),
        "actions": [workflow.transition_label(name, item.step) for name in item.actions],
    }


def _deadline(item: InboxItem, describe: Callable[..., str], now: Any) -> str:
    """The soonest pending deadline, as the changelist's "next deadline" column words it."""
    if item.due_at is None:
        return ""
    pending = item.record.pending_deadlines()
    return describe(pending[0], item.record, now) if pending else ""
