"""``EventDeliveryAdmin``: the events delivered from outside, read-only, filterable by
outcome and event (registered on import).

Deliveries carry what outside systems sent, so the page follows Django's own view
permission of ``EventDelivery`` (superusers, or whoever is given it), not the log's
rule of "any staff user".

Imports the delivery model and the admin's ``site``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import NoReverseMatch
from django.utils.html import format_html

from ..models import EventDelivery
from .site import page_url


@admin.register(EventDelivery)
class EventDeliveryAdmin(admin.ModelAdmin):
    list_display = ("delivered_at", "event", "event_id", "key", "outcome", "record_link", "seq")
    list_filter = ("outcome", "event")
    search_fields = ("event_id", "key", "object_id")
    date_hierarchy = "delivered_at"
    ordering = ("-delivered_at", "-id")
    list_select_related = ("content_type",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="record")
    def record_link(self, row: EventDelivery) -> str:
        """The record the event was for, linking to its admin page when it has one."""
        model = row.content_type.model_class()
        if model is None or not row.object_id:
            return "—"
        text = f"{model._meta.verbose_name} {row.object_id}"
        if model not in self.admin_site._registry:
            return text
        try:
            url = page_url(self.admin_site, model, "change", row.object_id)
        except NoReverseMatch:
            return text
        return format_html('<a href="{}">{}</a>', url, text)
