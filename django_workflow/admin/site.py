"""The admin site as the workflow pages read it: the workflow models a user may view
there, the URLs of a model's admin pages, the changelist filters carried from page to
page, what every page confirming a move shows around its form, and the permissions of
the pages every staff user reads and nobody writes through (the overview, the log).

Imports ``registry`` only; nothing here queries records or writes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse

from ..model.registry import workflow_models


class StaffReadOnlyAdmin(admin.ModelAdmin):
    """An admin page any active staff user opens, through which nobody adds, changes or
    deletes: what each user sees there is the subclass's to narrow."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_view_permission(request)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def viewable_models(admin_site: Any, request: HttpRequest) -> list[Any]:
    """The workflow models whose ``ModelAdmin`` on ``admin_site`` the user may view."""
    registry = admin_site._registry
    return [
        model
        for model in workflow_models()
        if model in registry and registry[model].has_view_or_change_permission(request)
    ]


def page_url(admin_site: Any, model: Any, page: str, *args: Any) -> str:
    """The URL of one of ``model``'s admin pages: ``"changelist"``, ``"change"``,
    ``"workflow_undo"``…"""
    info = model._meta.app_label, model._meta.model_name
    return reverse(f"{admin_site.name}:{info[0]}_{info[1]}_{page}", args=list(args))


def kept(request: HttpRequest) -> str:
    """The changelist filters the admin carries from page to page, as a query string."""
    filters = request.GET.get("_changelist_filters")
    return f"?{urlencode({'_changelist_filters': filters})}" if filters else ""


def confirming(model_admin: Any, request: HttpRequest, title: str) -> dict[str, Any]:
    """What a page confirming a move shows around its form: title and breadcrumbs."""
    site, opts = model_admin.admin_site, model_admin.model._meta
    return {
        **site.each_context(request),
        "title": title,
        "opts": opts,
        "changelist_url": page_url(site, model_admin.model, "changelist"),
        "app_url": reverse(f"{site.name}:app_list", kwargs={"app_label": opts.app_label}),
        "index_url": reverse(f"{site.name}:index"),
    }
