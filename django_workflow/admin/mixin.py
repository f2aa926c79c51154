"""``WorkflowAdminMixin`` for a workflow model's ``ModelAdmin``: the changelist (the step
and status filters, the next deadline, times in the workflow's zone) and the change
page's panel (the step, its buttons, the diagram, pending deadlines, attempts, history).
The views its buttons post to are ``transitions``', its changelist actions ``actions``'.

Imports ``graph``, ``owed_effects_read``, ``status``, ``scheduling``, ``undo``, ``wording``,
``halted_steps``' attempt readers, and the admin rooms below it; never the engine on import.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.paginator import Paginator
from django.http import HttpRequest
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext

from ..model import graph
from ..model.columns import WORKFLOW_VERSION
from ..model.versions import workflow_of
from ..reading import owed_effects_read
from ..reading.wording import row_label, times_in, trigger_words
from ..report import status
from ..scheduling import zone_of
from .actions import WorkflowBulkActions
from .display import (
    KINDS,
    describe_deadline,
    is_terminal,
    next_deadline,
    rendered,
    sla_clocks,
    undo_label,
    vote_tallies,
)
from .halted_steps import attempt_row, next_attempt_at
from .holding import HolderFilter, holder_text, panel_holding
from .join_panel import join_progress
from .site import kept, page_url
from .transitions import WorkflowTransitionViews

#: The panel's undo button when there is none to show.
NO_UNDO = {"undo_url": "", "undo_label": "", "undo_row": "", "undo_asks": False}


class WorkflowStatusFilter(admin.SimpleListFilter):
    """Records with an overdue deadline, or whose automatic step or on-enter effect halted."""

    title = "workflow status"
    parameter_name = "workflow"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("overdue", "Overdue deadline"), ("halted", "Halted")]

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        if self.value() == "overdue":
            return queryset.filter(pk__in=status.overdue(queryset.model).values("pk"))
        if self.value() == "halted":
            return queryset.filter(pk__in=status.halted(queryset.model).values("pk"))
        return queryset


class WorkflowAdminMixin(WorkflowBulkActions, WorkflowTransitionViews):
    """Add to a ``ModelAdmin`` of a workflow model: the step, its buttons, diagram and history.

    Each button posts (with CSRF) to a view that checks the transition's
    policy again for the logged-in user; a transition that accepts fields
    asks for them in a form first. Errors appear as admin messages.
    """

    change_form_template = "admin/django_workflow/change_form.html"
    change_list_template = "admin/django_workflow/change_list.html"
    workflow_history_per_page = 20

    class Media:
        css = {"all": ["django_workflow/workflow.css"]}

    # The changelist ----------------------------------------------------------------

    def get_list_filter(self, request: HttpRequest) -> Any:
        """The step and the workflow status first, then whatever the project lists."""
        state = self.model.workflow.state_attribute
        declared = tuple(super().get_list_filter(request))
        ours = () if state in declared else (state,)
        held = (HolderFilter,) if self.model.workflow.assignment else ()
        versioned = self.model.workflow.versions is not None and WORKFLOW_VERSION not in declared
        version = (WORKFLOW_VERSION,) if versioned else ()
        return (*ours, WorkflowStatusFilter, *version, *held, *declared)

    def get_list_display(self, request: HttpRequest) -> Any:
        """What the project lists, then the holder (with ``assignment``), the SLAs (with
        ``slas``), the next deadline."""
        held = ("workflow_holder",) if self.model.workflow.assignment else ()
        slas = ("workflow_slas",) if self.model.workflow.clocked_slas else ()
        return (*super().get_list_display(request), *held, *slas, "workflow_next_deadline")

    @admin.display(description="SLA")
    def workflow_slas(self, record: Any) -> str:
        clocks = sla_clocks(record)
        if len(clocks) == 1:
            return clocks[0]["text"]
        return "; ".join(f"{clock['label']}: {clock['text']}" for clock in clocks)

    @admin.display(description="held by")
    def workflow_holder(self, record: Any) -> str:
        return holder_text(record)

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        """The page's rows, each marked when its automatic step or an effect halted: one
        query for the page."""
        changelist = super().get_changelist_instance(request)
        rows = list(changelist.result_list)
        keys = [row.pk for row in rows]
        stopped = set(status.halted(self.model).filter(pk__in=keys).values_list("pk", flat=True))
        for row in rows:
            row.workflow_halted = row.pk in stopped
        return changelist

    @admin.display(description="next deadline")
    def workflow_next_deadline(self, record: Any) -> str:
        if getattr(record, "workflow_halted", False):  # nothing falls due: it waits for a person
            return format_html('<span class="workflow-overdue">{}</span>', gettext("halted"))
        # One zone per screen: the page names the workflow's; a record's own is named here.
        found = next_deadline(record, named=bool(self.model.workflow.time_zone_field))
        if found is None:
            return self.get_empty_value_display()
        deadline, text = found
        if deadline.due_at <= timezone.now():
            return format_html('<span class="workflow-overdue">{}</span>', text)
        return text

    def get_urls(self) -> list[Any]:
        prefix = f"{self.model._meta.app_label}_{self.model._meta.model_name}"
        view = self.admin_site.admin_view
        return [
            path(
                "<path:object_id>/workflow/undo/",
                view(self.workflow_undo_view),
                name=f"{prefix}_workflow_undo",
            ),
            path(
                "<path:object_id>/workflow/retry/",
                view(self.workflow_retry_view),
                name=f"{prefix}_workflow_retry",
            ),
            path(
                "<path:object_id>/workflow/retry-effect/",
                view(self.workflow_retry_effect_view),
                name=f"{prefix}_workflow_retry_effect",
            ),
            path(
                "<path:object_id>/workflow/<str:name>/",
                view(self.workflow_transition_view),
                name=f"{prefix}_workflow_transition",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        """Times in the workflow's zone, named once above the list (with a
        ``time_zone_field``, each next deadline names its record's zone too)."""
        workflow = self.model.workflow
        zone = ZoneInfo(workflow.time_zone)
        words = times_in(zone)
        if workflow.time_zone_field:
            words = gettext("%(times)s Next deadlines in each record's own zone.") % {
                "times": words
            }
        context = {"workflow_zone": words, **(extra_context or {})}
        with timezone.override(zone):
            return rendered(super().changelist_view(request, context))

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The page in the record's zone (its form's date and time fields too), named
        once in the panel."""
        record = self.get_object(request, unquote(object_id))
        if record is None:
            return super().change_view(request, object_id, form_url, extra_context)
        extra_context = {
            **(extra_context or {}),
            "workflow": self.workflow_panel(request, record),
        }
        with timezone.override(zone_of(record)):
            return rendered(super().change_view(request, object_id, form_url, extra_context))

    # The panel ----------------------------------------------------------------------

    def workflow_panel(self, request: HttpRequest, record: Any) -> dict[str, Any]:
        workflow = workflow_of(record)
        step = record.workflow.current_step
        declared = workflow.steps.get(step)
        if declared is None:  # left behind by a changed declaration: shown, never moved
            return self._stranded_panel(request, record, step)
        may_change = self.has_change_permission(request, record)
        actions = [
            {
                "name": name,
                "label": workflow.transition_label(name, step),
                "url": self._workflow_url(record, "transition", name) + kept(request),
                "asks": self._asks(request, record, workflow.transition(step, name)),
            }
            for name in (self.get_workflow_transitions(request, record) if may_change else [])
        ]
        history = self._workflow_history(request, record)
        return {
            "current": step,
            "current_label": workflow.step_label(step),
            "kind": KINDS[declared.kind],
            "actions": actions,
            **self._undo_button(request, record, may_change),
            "attempt": self._attempt(request, record, declared, may_change),
            "votes": vote_tallies(record),
            "joins": join_progress(self.admin_site, request, record, declared),
            "holding": panel_holding(record, request, may_change, self.admin_site),
            "slas": sla_clocks(record),
            **self._halted_effects(request, record, may_change),
            "diagram": mark_safe(graph.svg(workflow, current=step)),  # built from escaped names
            "pending": [
                {
                    "text": describe_deadline(d, record, named=False),
                    "overdue": d.due_at <= timezone.now(),
                }
                for d in record.workflow.pending_deadlines()
            ],
            "history": history,
            "logged": workflow.log is True,
            "zone": times_in(zone_of(record)),
            **_version(record),
        }

    def _undo_button(self, request: HttpRequest, record: Any, may_change: bool) -> dict[str, Any]:
        """The undo button, named for what it reverses: "Undo reject" or "Redo reject";
        like a transition, it confirms first when it would move into a final step."""
        from ..engine.undo import undoable  # the runtime, loaded by a request

        row = undoable(record, request.user) if may_change else None
        if row is None:
            return dict(NO_UNDO)
        url = self._workflow_url(record, "undo") + kept(request)
        asks = is_terminal(workflow_of(record), row.from_state)
        return {
            "undo_url": url,
            "undo_label": undo_label(record, row),
            "undo_row": row.pk,
            "undo_asks": asks,
        }

    def _attempt(
        self, request: HttpRequest, record: Any, step: Any, may_change: bool
    ) -> dict[str, Any] | None:
        """An automatic step's attempts so far, its last error, its next retry; and a
        "Retry now" button when it halted."""
        if not step.is_automatic:
            return None
        row = attempt_row(record)
        if row is None:
            return None
        retry_url = self._workflow_url(record, "retry") + kept(request)
        return {
            "attempts": row.attempts,
            "last_error": row.last_error,
            "retry_at": row.retry_at,
            "next_attempt_at": next_attempt_at(record, row),
            "halted": row.halted,
            "retry_url": retry_url if row.halted and may_change else "",
        }

    def _halted_effects(
        self, request: HttpRequest, record: Any, may_change: bool
    ) -> dict[str, Any]:
        """The ``on_enter`` effects the record owes whose attempts ran out (an entry's,
        wherever the record is now), and where their "Retry now" buttons post."""
        workflow = workflow_of(record)
        effects = [
            {
                "id": row.pk,
                "step_label": workflow.step_label(row.step),
                "entered_at": row.entered_at,
                "attempts": row.attempts,
                "last_error": row.last_error,
            }
            for row in owed_effects_read.halted(record)
        ]
        url = self._workflow_url(record, "retry_effect") + kept(request) if may_change else ""
        return {"halted_effects": effects, "effect_retry_url": url if effects else ""}

    def _stranded_panel(self, request: HttpRequest, record: Any, step: str) -> dict[str, Any]:
        workflow = workflow_of(record)
        return {
            "current": step,
            "current_label": step,
            "kind": "no longer declared",
            "stranded": True,
            "actions": [],
            **NO_UNDO,
            "attempt": None,
            **self._halted_effects(request, record, self.has_change_permission(request, record)),
            "diagram": mark_safe(graph.svg(workflow)),  # built from escaped names
            "pending": [],
            "history": self._workflow_history(request, record),
            "logged": workflow.log is True,
            "zone": times_in(zone_of(record)),
            **_version(record),
        }

    def _workflow_history(self, request: HttpRequest, record: Any) -> Any:
        """A page of the record's log, newest first, each row with its steps' labels, and
        what it did and why in words."""
        page = Paginator(
            record.workflow.history()
            .select_related("actor", "reverses__reverses")
            .order_by("-occurred_at", "-id"),
            self.workflow_history_per_page,
        ).get_page(request.GET.get("history_page"))
        workflow = workflow_of(record)
        page.object_list = list(page.object_list)
        for row in page.object_list:
            row.from_label = workflow.step_label(row.from_state) if row.from_state else ""
            row.to_label = workflow.step_label(row.to_state)
            row.label = row_label(workflow, row)
            row.trigger = trigger_words(row)
        return page

    def _workflow_url(self, record: Any, view: str, *args: str) -> str:
        return page_url(self.admin_site, self.model, f"workflow_{view}", record.pk, *args)


def _version(record: Any) -> dict[str, Any]:
    """The panel's version line, on a model with versions: the record's, and the current
    one when the record runs on an older."""
    version = record.workflow.version
    if version is None:
        return {}
    current = type(record).workflow.version
    return {"version": version, "current_version": current if version != current else None}
