"""The admin's "My work" page: the records whose change page offers the logged-in user
a transition, and exactly the transitions it offers.

The candidates are the inbox's (``actionable_by``: one query per model, from the
policies), drawn from each ``ModelAdmin``'s ``get_queryset``; each is then asked
of its ``ModelAdmin`` as its change page asks: ``has_change_permission`` for the
record, then ``get_workflow_transitions``, which sees the values the admin fills
in itself. Wired into the "Workflows" overview's URLs.

Imports ``inbox``, ``registry``, ``wording`` and the admin's ``display`` and ``site``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.utils import quote
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.text import capfirst

from ..model.registry import workflow_models
from ..reading.claims_read import SECTIONS, section
from ..reading.inbox import CLAIM, InboxItem, gather
from ..reading.wording import times_in
from .display import next_deadline
from .holding import claim_offered, hold_button, hold_url
from .site import page_url

#: Rows on the page: the soonest deadlines first, so the rest can wait.
PAGE_SIZE = 100


def my_work_view(request: HttpRequest, *, admin_site: Any) -> TemplateResponse:
    """The records the user can act on here, soonest deadline first, each linking to its
    change page; each deadline worded as the changelist words it. Rows of models in
    different zones: every time reads in the current zone, named once."""
    now, zone = timezone.now(), timezone.get_current_timezone()
    admins = {admin.model: admin for admin in changeable(admin_site, request)}
    items = gather(
        [admin.get_queryset(request) for admin in admins.values()],
        request.user,
        lambda record: offered(admins[type(record)], request, record),
        now,
        limit=PAGE_SIZE,
    )
    rows = [_row(item, admin_site, zone, now, request.user) for item in items]
    context = {
        **admin_site.each_context(request),
        "title": "My work",
        "rows": rows,
        "sections": _sections(rows),
        "workflow_zone": times_in(zone, now),
        "limit": PAGE_SIZE,
    }
    return TemplateResponse(request, "admin/django_workflow/my_work.html", context)


def changeable(admin_site: Any, request: HttpRequest) -> list[Any]:
    """The ``ModelAdmin``s on ``admin_site`` that show workflow buttons, of the workflow
    models whose records the user may change: only a change permission brings buttons.
    A ``ModelAdmin`` shows buttons when it has ``get_workflow_transitions`` (the
    ``WorkflowAdminMixin`` gives it)."""
    registry = admin_site._registry
    return [
        registry[model]
        for model in workflow_models()
        if hasattr(registry.get(model), "get_workflow_transitions")
        and registry[model].has_change_permission(request)
    ]


def offered(model_admin: Any, request: HttpRequest, record: Any) -> list[str]:
    """The transitions ``record``'s change page offers the user, as its panel decides
    (``WorkflowAdminMixin.workflow_panel``): none without the change permission on the
    record, else what ``get_workflow_transitions`` lists."""
    if not model_admin.has_change_permission(request, record):
        return []
    transitions = model_admin.get_workflow_transitions(request, record)
    return transitions or claim_offered(record, request.user)


def _row(item: InboxItem, admin_site: Any, zone: Any, now: Any, user: Any) -> dict:
    record, workflow = item.record, item.model.workflow
    hold = hold_button(record, user)
    return {
        "section": section(record, user),
        "hold": hold,
        "hold_url": hold_url(record, hold, admin_site) if hold else "",
        "item": item,
        "name": capfirst(item.model._meta.verbose_name),
        "label": item.model._meta.label,
        "url": page_url(admin_site, item.model, "change", quote(record.pk)),
        "deadline": _deadline(item, zone, now),
        "actions": [
            {"name": name, "label": workflow.transition_label(name, item.step)}
            for name in item.actions
            if not (workflow.assignment and name == CLAIM)  # the row's Claim button
        ],
    }


def _sections(rows: list[dict]) -> list[dict]:
    """The rows by section, in page order, the empty ones left out."""
    grouped = [
        {"title": title, "rows": [r for r in rows if r["section"] == title]} for title in SECTIONS
    ]
    return [group for group in grouped if group["rows"]]


def _deadline(item: InboxItem, zone: Any, now: Any) -> str:
    """The soonest pending deadline, in ``zone``, which the page names once."""
    if item.due_at is None:
        return ""
    found = next_deadline(item.record, now, named=False, zone=zone)
    return found[1] if found else ""
