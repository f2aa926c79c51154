"""Holders in the admin (``Workflow.assignment = True``, docs/holding-work.md): the
changelist's "held by" filter and column, the sections of "My work" with their Claim and
Release buttons and the view they post to, and ``AbsenceAdmin``.

Imports ``claims_read``, ``inbox``, the models and the admin's ``site``; the engine only
through the record's ``claim()`` and ``release()``.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.http import Http404, HttpRequest, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from ..errors import WorkflowError, staff_text
from ..model.columns import ASSIGNEE_ID
from ..model.versions import workflow_of
from ..models import Absence
from ..reading import claims_read
from ..reading.claims_read import RELEASE
from ..reading.inbox import CLAIM, claims_first
from ..reading.wording import times_in


class HolderFilter(admin.SimpleListFilter):
    """Records held by the logged-in user, by nobody, or by someone else."""

    title = "held by"
    parameter_name = "holder"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("me", "Me"), ("nobody", "Nobody"), ("others", "Someone else")]

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        mine = {ASSIGNEE_ID: request.user.pk}
        if self.value() == "me":
            return queryset.filter(**mine)
        if self.value() == "nobody":
            return queryset.filter(claims_read.unheld())
        if self.value() == "others":
            return queryset.exclude(claims_read.unheld()).exclude(**mine)
        return queryset


def holder_text(record: Any) -> str:
    """The changelist's "held by" cell: the holder, or a dash."""
    held = claims_read.holder(record)
    return "-" if held is None else str(held)


def hold_button(record: Any, user: Any) -> str:
    """The button a "My work" row shows: ``claim`` on an unheld record of a model with
    holders, ``release`` on one the user holds or holds in someone's stead (or may let go
    of by the ``assign`` policy); none on a model without holders."""
    return claims_read.hold_offered(record, user)


def claim_offered(record: Any, user: Any) -> list[str]:
    """``["claim"]`` for an unheld record of a ``claim=True`` step the user may claim:
    its change page offers no transition until someone holds it."""
    return [CLAIM] if claims_first(record) and claims_read.claimable(record, user) else []


def panel_holding(
    record: Any, request: HttpRequest, may_change: bool, admin_site: Any
) -> dict[str, Any] | None:
    """The change page's line on who holds the record, with its Claim or Release button
    (for a user who may change it); ``None`` on a model without holders."""
    workflow = workflow_of(record)
    if not workflow.assignment:
        return None
    held = claims_read.holder(record)
    text = "Nobody holds it." if held is None else f"Held by {held}."
    if workflow.claims(record.workflow.current_step):
        text += " Only its holder may call this step's transitions."
    button = hold_button(record, request.user) if may_change else ""
    return {
        "text": text,
        "button": button,
        "url": hold_url(record, button, admin_site) if button else "",
        "next": request.get_full_path(),
    }


def hold_url(record: Any, action: str, admin_site: Any) -> str:
    meta = record._meta
    args = [meta.app_label, meta.model_name, record.pk, action]
    return reverse(f"{admin_site.name}:django_workflow_hold", args=args)


def hold_view(
    request: HttpRequest,
    app_label: str,
    model_name: str,
    object_id: str,
    action: str,
    *,
    admin_site: Any,
) -> HttpResponseRedirect | HttpResponseNotAllowed:
    """Claim or release one record for the logged-in user (POST, CSRF), who needs the
    change permission on it; a refusal is a message on "My work", never an error page."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if action not in (CLAIM, RELEASE):
        raise Http404(f"No such action: {action!r}.")
    record, model_admin = _record(admin_site, app_label, model_name, object_id)
    if not model_admin.has_change_permission(request, record):
        raise PermissionDenied
    try:
        getattr(record.workflow, action)(request.user)
    except (WorkflowError, PermissionDenied) as refusal:
        messages.error(request, staff_text(refusal))
    else:
        done = "You hold" if action == CLAIM else "You let go of"
        messages.success(request, f"{done} {record}.")
    back = request.POST.get("next", "")
    safe = url_has_allowed_host_and_scheme(back, {request.get_host()}, request.is_secure())
    if not (back and safe):
        back = reverse(f"{admin_site.name}:django_workflow_my_work")
    return HttpResponseRedirect(back)


def _record(admin_site: Any, app_label: str, model_name: str, object_id: str) -> Any:
    try:
        model = apps.get_model(app_label, model_name)
    except LookupError:
        raise Http404("No such model.") from None
    model_admin = admin_site._registry.get(model)
    workflow = getattr(model, "workflow", None)
    if model_admin is None or workflow is None or not workflow.assignment:
        raise Http404("No record with holders here.")
    try:
        record = model._default_manager.filter(pk=unquote(object_id)).first()
    except (ValidationError, ValueError, TypeError, OverflowError):  # a malformed key
        record = None
    if record is None:
        raise Http404("No such record.")
    return record, model_admin


@admin.register(Absence)
class AbsenceAdmin(admin.ModelAdmin):
    """Who stands in for whom, and when."""

    list_display = ("user", "delegate", "starts_at", "ends_at")
    list_filter = ("starts_at", "ends_at")
    search_fields = ("user__username", "delegate__username")
    raw_id_fields = ("user", "delegate")  # where people cannot be searched by name
    date_hierarchy = "starts_at"

    def get_autocomplete_fields(self, request: HttpRequest) -> tuple[str, ...]:
        """People searched by name where the site's user admin can search them (a
        project without one keeps the ID boxes: Django's checks would refuse it)."""
        people = self.admin_site._registry.get(get_user_model())
        return ("user", "delegate") if people is not None and people.search_fields else ()

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if isinstance(db_field, models.DateTimeField) and field is not None:
            field.help_text = times_in(timezone.get_current_timezone())
        return field
