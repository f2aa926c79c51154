"""The fragments the template tags render and the views answer: a record's actions
(its forms, a note saying what a post did or why it was refused, a confirmation), its
history, its pending deadlines, and the user's inbox. Each is a template under
``django_workflow/`` a project may override.

Imports ``claims_read``, ``inbox``, ``wording``, ``web.access`` and ``web.form_offers``; nothing
here writes.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.text import capfirst

from ..model.registry import workflow_models
from ..model.versions import workflow_of
from ..reading import claims_read
from ..reading.inbox import CLAIM, claims_first, gather
from ..reading.wording import (
    describe_deadline,
    next_deadline,
    row_label,
    sla_clocks,
    step_words,
    times_in,
    trigger_words,
)
from ..scheduling import zone_of
from .access import may_change_some, may_view
from .form_offers import (
    Offer,
    comment_form,
    hold_offer,
    offers,
    record_key,
    values_form,
)

ACTIONS = "django_workflow/actions.html"
HISTORY = "django_workflow/history.html"
DEADLINES = "django_workflow/deadlines.html"
SLAS = "django_workflow/slas.html"
INBOX = "django_workflow/inbox.html"
#: Rows of history a fragment shows, newest first.
HISTORY_ROWS = 20
#: Records the inbox lists, soonest deadline first.
INBOX_ROWS = 50


def safe_next(request: HttpRequest, url: str | None, record: Any = None) -> str:
    """Where to send the user back: ``url`` when it stays on this site, else the
    record's ``get_absolute_url()``, else the site's root."""
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    absolute = getattr(record, "get_absolute_url", None)
    return absolute() if callable(absolute) else "/"


def act_url(record: Any, name: str) -> str:
    opts = record._meta
    return reverse("django_workflow:act", args=[opts.app_label, opts.model_name, record.pk, name])


def actions(
    request: HttpRequest,
    record: Any,
    *,
    next_url: str,
    note: dict[str, str] | None = None,
    posted: dict[str, Any] | None = None,
) -> str:
    """The record's step and a form per transition the user may call. ``posted`` shows
    one transition's forms as posted (with their errors), or, with ``confirm`` set, only
    the page confirming it."""
    if not may_view(request.user, record):
        return ""
    posted = posted or {}
    forms = [_forms(record, offer, posted) for offer in offers(record, request.user)]
    confirming = next((f for f in forms if posted.get("confirm") == f["offer"].name), None)
    if confirming is not None:
        confirming["to"] = posted["to"]
    context = {
        "record": record,
        "key": record_key(record),
        "box_id": "workflow-" + record_key(record).replace(".", "-").replace(":", "-"),
        "step": record.workflow.current_step,
        "step_label": workflow_of(record).step_label(record.workflow.current_step),
        "note": note,
        "next": next_url,
        "offers": forms,
        "confirming": confirming,
        "holding": holding(record, request.user),
    }
    return render_to_string(ACTIONS, context, request=request)


def holding(record: Any, user: Any) -> dict[str, Any] | None:
    """Who holds the record, and the Claim or Release the user is offered; ``None`` on a
    model without holders or in a final step (nobody holds a record there)."""
    workflow = workflow_of(record)
    declared = workflow.steps.get(record.workflow.current_step)
    if not workflow.assignment or declared is None or declared.is_terminal:
        return None
    held = claims_read.holder(record)
    text = "Nobody holds it." if held is None else f"Held by {held}."
    if workflow.claims(record.workflow.current_step):
        text += " Only its holder may call this step's transitions."
    offer = hold_offer(record, user)
    url = hold_url(record, offer.action) if offer else ""
    return {"text": text, "offer": offer, "url": url}


def hold_url(record: Any, action: str) -> str:
    opts = record._meta
    args = [opts.app_label, opts.model_name, record.pk, action]
    return reverse("django_workflow:hold", args=args)


def _forms(record: Any, offer: Offer, posted: dict[str, Any]) -> dict[str, Any]:
    if posted.get("name") == offer.name:
        values, comment = posted.get("values"), posted.get("comment")
    else:
        values = values_form(record, offer.transition)
        comment = comment_form(record, offer.transition)
    return {"offer": offer, "url": act_url(record, offer.name), "form": values, "comment": comment}


def history(request: HttpRequest, record: Any, limit: int = HISTORY_ROWS) -> str:
    """The record's newest log rows, each in words: when, what, from and to, by whom."""
    if not may_view(request.user, record):
        return ""
    workflow = workflow_of(record)
    rows = list(
        record.workflow.history()
        .select_related("actor", "reverses__reverses")
        .order_by("-occurred_at", "-id")[:limit]
    )
    entries = [
        {
            "row": row,
            "label": row_label(workflow, row),
            "trigger": trigger_words(row),
            "from_label": step_words(workflow, row.from_state),
            "to_label": step_words(workflow, row.to_state),
        }
        for row in rows
    ]
    zone = zone_of(record)  # as the admin's panel: the record's zone, named once
    context = {
        "record": record,
        "entries": entries,
        "logged": workflow.log is True,
        "zone": times_in(zone),
    }
    with timezone.override(zone):
        return render_to_string(HISTORY, context, request=request)


def deadlines(request: HttpRequest, record: Any) -> str:
    """The record's pending deadlines, soonest first, in its time zone, each with how far
    away (or how overdue) it is."""
    if not may_view(request.user, record):
        return ""
    now = timezone.now()
    pending = [
        {"text": describe_deadline(d, record, now), "overdue": d.due_at <= now, "deadline": d}
        for d in record.workflow.pending_deadlines()
    ]
    return render_to_string(DEADLINES, {"record": record, "pending": pending}, request=request)


def slas(request: HttpRequest, record: Any) -> str:
    """Each service-level clock of the record in words, as the admin's panel shows it:
    "SLA “Resolution”: 24 h left"; nothing for a workflow without SLAs."""
    if not may_view(request.user, record) or not workflow_of(record).clocked_slas:
        return ""
    return render_to_string(SLAS, {"record": record, "clocks": sla_clocks(record)}, request=request)


def inbox(request: HttpRequest, limit: int = INBOX_ROWS) -> str:
    """What waits for the user: the records of the models they may change on which they
    may call a transition, or claim one of a ``claim=True`` step nobody holds, soonest
    deadline first (``inbox.gather``), each with its forms; on models with holders, in
    the sections of the admin's "My work" (``claims_read.SECTIONS``)."""
    user, now = request.user, timezone.now()
    models = [m for m in workflow_models() if may_change_some(user, m)]

    def names(record: Any) -> list[str]:
        found = [offer.name for offer in offers(record, user)]
        if found or not claims_first(record):
            return found
        offer = hold_offer(record, user)  # its transitions wait for a holder
        return [CLAIM] if offer is not None and offer.action == CLAIM else []

    querysets = [model._default_manager.all() for model in models]
    items = gather(querysets, user, names, now, limit=limit) if models else []
    next_url = request.get_full_path()
    rows = [
        {
            "item": item,
            "key": record_key(item.record),
            "model_name": capfirst(item.model._meta.verbose_name),
            "url": _absolute(item.record),
            "deadline": _deadline(item, now),
            "actions": actions(request, item.record, next_url=next_url),
            "section": claims_read.section(item.record, user),
        }
        for item in items
    ]
    sections = [
        {"title": title, "rows": [row for row in rows if row["section"] == title]}
        for title in claims_read.SECTIONS
    ]
    context = {"rows": rows, "sections": [s for s in sections if s["rows"]], "limit": limit}
    return render_to_string(INBOX, context, request=request)


def _absolute(record: Any) -> str:
    absolute = getattr(record, "get_absolute_url", None)
    return absolute() if callable(absolute) else ""


def _deadline(item: Any, now: Any) -> str:
    if item.due_at is None:
        return ""
    found = next_deadline(item.record, now)
    return found[1] if found else ""
