"""``{% load workflow %}``: a record's actions, history, deadlines and service levels,
and the user's inbox, for pages outside the admin (docs/outside-the-admin.md). Each
renders for the request's user, so the template context needs the request (the
``django.template.context_processors.request`` context processor)."""

from __future__ import annotations

from typing import Any

from django import template
from django.core.exceptions import ImproperlyConfigured

from ..web import fragments

register = template.Library()


def _request(context: Any, tag: str) -> Any:
    request = context.get("request")
    if request is None:
        raise ImproperlyConfigured(
            f"{{% {tag} %}} renders for the request's user, but the template context has "
            "no request: add 'django.template.context_processors.request' to the "
            "context_processors of TEMPLATES, or render with the request."
        )
    return request


@register.simple_tag(takes_context=True)
def workflow_actions(context: Any, record: Any, next: str | None = None) -> str:
    """A form per transition the user may call on ``record``; after a move the user comes
    back to ``next`` (default: this page)."""
    request = _request(context, "workflow_actions")
    next_url = fragments.safe_next(request, next or request.get_full_path(), record)
    return fragments.actions(request, record, next_url=next_url)


@register.simple_tag(takes_context=True)
def workflow_history(context: Any, record: Any, limit: int = fragments.HISTORY_ROWS) -> str:
    """The record's newest log rows, in words."""
    return fragments.history(_request(context, "workflow_history"), record, limit)


@register.simple_tag(takes_context=True)
def workflow_deadlines(context: Any, record: Any) -> str:
    """The record's pending deadlines, soonest first."""
    return fragments.deadlines(_request(context, "workflow_deadlines"), record)


@register.simple_tag(takes_context=True)
def workflow_slas(context: Any, record: Any) -> str:
    """The record's service-level clocks: left, paused, met or breached."""
    return fragments.slas(_request(context, "workflow_slas"), record)


@register.simple_tag(takes_context=True)
def workflow_inbox(context: Any, limit: int = fragments.INBOX_ROWS) -> str:
    """What waits for the user, soonest deadline first, each record with its forms."""
    return fragments.inbox(_request(context, "workflow_inbox"), limit)
