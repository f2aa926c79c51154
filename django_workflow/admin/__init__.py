"""Admin: ``WorkflowAdminMixin`` for workflow models, the overview; the read-only
transition log is ``log``'s (registered on import)."""

from __future__ import annotations

import copy
from datetime import timedelta
from functools import partial
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers, options
from django.contrib.admin.options import IS_POPUP_VAR
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.forms import modelform_factory
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import dateformat, timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext

from .. import graph, status
from ..conditions import unmet_reason
from ..declaration import humanise
from ..errors import StaleRecord, UndoNotPermitted, WorkflowError, WorkflowPermissionDenied
from ..history import last_step_change
from ..models import TransitionLog, WorkflowOverview
from ..policies import allowed
from ..queueing import attempt_row, next_attempt_at, retry_now
from ..registry import workflow_models
from ..scheduling import zone_of
from ..undo import undoable, undoable_row
from ..wording import row_label, times_in
from .actions import (
    BulkReport,
    asks_values,
    failed,
    foresee,
    reason_of,
    transition_action,
)
from .log import TransitionLogAdmin, WorkflowModelFilter, rendered  # noqa: F401
from .my_work import my_work_view

#: Where an action is offered (Django 6.1 and later); ``None`` before, when actions were
#: only the changelist's.
CHANGE_LIST = getattr(getattr(options, "ActionLocation", None), "CHANGE_LIST", None)


class WorkflowStatusFilter(admin.SimpleListFilter):
    """Records with an overdue deadline, or whose automatic step halted."""

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


@admin.register(WorkflowOverview)
class WorkflowOverviewAdmin(admin.ModelAdmin):
    """The "Workflows" page: per model and step, records, overdue, halted, oldest entry.

    Any active staff user may open it; it lists the models whose admin they may view.
    """

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_urls(self) -> list[Any]:
        """The overview page and "My work": its rows are the log's, which this admin never shows."""
        info = self.model._meta.app_label, self.model._meta.model_name
        view = self.admin_site.admin_view(self.changelist_view)
        mine = partial(my_work_view, admin_site=self.admin_site, describe=describe_deadline)
        return [
            path("", view, name="{}_{}_changelist".format(*info)),
            path("mine/", self.admin_site.admin_view(mine), name="django_workflow_my_work"),
        ]

    def changelist_view(self, request, extra_context=None):
        now = timezone.now()
        context = {
            **self.admin_site.each_context(request),
            "title": "Workflows",
            "opts": self.model._meta,
            "models": [self._model_rows(request, m, now) for m in self._viewable(request)],
            "time_in_step_days": status.TIME_IN_STEP_DAYS,
        }
        return TemplateResponse(request, "admin/django_workflow/overview.html", context)

    def _viewable(self, request: HttpRequest) -> list[Any]:
        registry = self.admin_site._registry
        return [
            model
            for model in workflow_models()
            if model in registry and registry[model].has_view_or_change_permission(request)
        ]

    def _model_rows(self, request: HttpRequest, model: Any, now: Any) -> dict[str, Any]:
        info = model._meta.app_label, model._meta.model_name
        changelist = reverse(f"{self.admin_site.name}:{info[0]}_{info[1]}_changelist")
        state = model.workflow.state_attribute

        def link(step: str, **more: str) -> str:
            return f"{changelist}?{urlencode({f'{state}__exact': step, **more})}"

        times = status.times_in_step(model, now)
        return {
            "name": capfirst(model._meta.verbose_name_plural),
            "url": changelist,
            "steps": [
                {
                    "row": row,
                    "label": model.workflow.step_label(row.step),
                    "url": link(row.step),
                    "overdue_url": link(row.step, workflow="overdue"),
                    "halted_url": link(row.step, workflow="halted"),
                    "waiting": _span(now - row.oldest_entry) if row.oldest_entry else "",
                    "time": _time_in_step(times.get(row.step)),
                }
                for row in status.step_statuses(model, now)
            ],
        }


class CommentForm(forms.Form):
    """The optional reason a page asks for beside a move; stored on the log row."""

    prefix = "workflow"
    comment = forms.CharField(
        label="Reason / comment",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Optional. Kept in the record's history.",
    )


def _comment(request: HttpRequest) -> str:
    form = CommentForm(request.POST)
    return form.cleaned_data["comment"] if form.is_valid() else ""


class WorkflowAdminMixin:
    """Add to a ``ModelAdmin`` of a workflow model: the step, its buttons, diagram and history.

    Each button posts (with CSRF) to a view that checks the transition's
    policy again for the logged-in user; a transition that accepts fields
    asks for them in a form first. Errors appear as admin messages.
    """

    change_form_template = "admin/django_workflow/change_form.html"
    change_list_template = "admin/django_workflow/change_list.html"
    workflow_history_per_page = 20

    #: Why an undo or redo was refused, in words, by ``UndoNotPermitted.reason``.
    workflow_undo_refusals = {
        "undo_not_enabled": "this workflow has no undo",
        "no_history": "nothing has moved this record yet",
        "not_undoable": "its last move cannot be undone",
        "window_expired": "the time allowed to undo the move ({within}) has passed",
        "no_actor": "only the person who made the move may undo it",
        "different_actor": "only the person who made the move may undo it",
        "effect_ran": "the step it entered has already started its work",
    }

    class Media:
        css = {"all": ["django_workflow/workflow.css"]}

    # The changelist ----------------------------------------------------------------

    def get_list_filter(self, request: HttpRequest) -> Any:
        """The step and the workflow status first, then whatever the project lists."""
        state = self.model.workflow.state_attribute
        declared = tuple(super().get_list_filter(request))
        ours = () if state in declared else (state,)
        return (*ours, WorkflowStatusFilter, *declared)

    def get_list_display(self, request: HttpRequest) -> Any:
        """What the project lists, then the next deadline."""
        return (*super().get_list_display(request), "workflow_next_deadline")

    def get_actions(self, request: HttpRequest, action_location: Any = CHANGE_LIST) -> Any:
        """Django's actions, then one per transition that asks for no value ("Close
        selected"), for users who may change records: each selected record is moved as
        its button would move it, and the message says what became of each."""
        location = () if action_location is None else (action_location,)
        actions = super().get_actions(request, *location)
        disabled = self.actions is None or IS_POPUP_VAR in request.GET
        if disabled or action_location != CHANGE_LIST or not self.has_change_permission(request):
            return actions
        workflow = self.model.workflow
        for name in workflow.transition_names:
            if not asks_values(workflow, name):
                action = self.get_action(transition_action(workflow, name), *location)
                actions[f"workflow_{name}"] = action
        return actions

    def workflow_bulk_action(self, request: HttpRequest, queryset: Any, name: str) -> Any:
        """A changelist action: a selection some of whose records would move into a final
        step is confirmed on a page first (posting back ``post=yes``, as Django's "Delete
        selected" does); any other moves at once."""
        if request.POST.get("post") == "yes":
            return self.workflow_bulk_transition(request, queryset, name, comment=_comment(request))
        hidden = set(self._hidden_from(request, queryset, name))

        def outlook(record: Any) -> tuple[str | None, str]:
            return (
                (None, "not offered here")
                if record.pk in hidden
                else foresee(record, name, request.user)
            )

        forecast = [(record, *outlook(record)) for record in queryset]
        workflow = self.model.workflow
        if not any(target and _is_terminal(workflow, target) for _, target, _ in forecast):
            return self.workflow_bulk_transition(request, queryset, name)
        return self._bulk_confirmation(request, name, forecast)

    def _bulk_confirmation(self, request: HttpRequest, name: str, forecast: list[Any]) -> Any:
        workflow = self.model.workflow
        label = workflow.transition_label(name)
        moving = [
            {"record": r, "to": workflow.step_label(t), "final": _is_terminal(workflow, t)}
            for r, t, _ in forecast
            if t
        ]
        staying = [{"record": r, "reason": why} for r, t, why in forecast if not t]
        info = self.model._meta.app_label, self.model._meta.model_name
        context = {
            **self.admin_site.each_context(request),
            "title": f"{label}: confirm",
            "opts": self.model._meta,
            "transition_label": label,
            "moving": moving,
            "staying": staying,
            "final_steps": sorted({m["to"] for m in moving if m["final"]}, key=str),
            "selected": [r.pk for r, _, _ in forecast],
            "action": f"workflow_{name}",
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "comment_form": CommentForm(),
            "back_url": request.get_full_path(),
            "changelist_url": reverse(f"{self.admin_site.name}:{info[0]}_{info[1]}_changelist"),
            "app_url": reverse(f"{self.admin_site.name}:app_list", kwargs={"app_label": info[0]}),
            "index_url": reverse(f"{self.admin_site.name}:index"),
        }
        return TemplateResponse(request, "admin/django_workflow/bulk_confirmation.html", context)

    def workflow_bulk_transition(
        self, request: HttpRequest, queryset: Any, name: str, comment: str = ""
    ) -> None:
        """Move the selected records through ``name`` as the logged-in user; report outcomes."""
        hidden = self._hidden_from(request, queryset, name)
        outcomes = queryset.exclude(pk__in=hidden).transition(
            name, actor=request.user, comment=comment
        )
        report = BulkReport(self.model.workflow, name)
        for record in queryset.filter(pk__in=hidden):
            report.refused(record, "not offered here")
        for record in queryset.filter(pk__in=[pk for pk, o in outcomes.items() if failed(o)]):
            report.refused(record, reason_of(outcomes[record.pk]))
        for outcome in outcomes.values():
            if not failed(outcome):
                report.moved(outcome)
        report.send(self, request)

    def _hidden_from(self, request: HttpRequest, queryset: Any, name: str) -> list[Any]:
        """The records whose ``get_workflow_transitions`` leaves ``name`` out, when a
        project overrides it (the default offers what the policy allows: the call checks)."""
        if type(self).get_workflow_transitions is WorkflowAdminMixin.get_workflow_transitions:
            return []
        return [r.pk for r in queryset if name not in self.get_workflow_transitions(request, r)]

    @admin.display(description="next deadline")
    def workflow_next_deadline(self, record: Any) -> str:
        pending = record.pending_deadlines()
        if not pending:
            return self.get_empty_value_display()
        deadline = pending[0]
        # One zone per screen: the page names the workflow's; a record's own is named here.
        text = describe_deadline(deadline, record, named=bool(self.model.workflow.time_zone_field))
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
        workflow = type(record).workflow
        step = record.current_step
        declared = workflow.steps.get(step)
        if declared is None:  # left behind by a changed declaration: shown, never moved
            return self._stranded_panel(request, record, step)
        may_change = self.has_change_permission(request, record)
        actions = [
            {
                "name": name,
                "label": workflow.transition_label(name, step),
                "url": self._workflow_url(record, "transition", name) + _kept(request),
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
            "diagram": mark_safe(graph.svg(workflow, current=step)),  # built from escaped names
            "pending": [
                {
                    "text": describe_deadline(d, record, named=False),
                    "overdue": d.due_at <= timezone.now(),
                }
                for d in record.pending_deadlines()
            ],
            "history": history,
            "logged": workflow.log is True,
            "zone": times_in(zone_of(record)),
        }

    def _undo_button(self, request: HttpRequest, record: Any, may_change: bool) -> dict[str, Any]:
        """The undo button, named for what it reverses: "Undo reject" or "Redo reject";
        like a transition, it confirms first when it would move into a final step."""
        row = undoable(record, request.user) if may_change else None
        if row is None:
            return {"undo_url": "", "undo_label": "", "undo_row": "", "undo_asks": False}
        url = self._workflow_url(record, "undo") + _kept(request)
        asks = _is_terminal(type(record).workflow, row.from_state)
        return {
            "undo_url": url,
            "undo_label": _undo_label(record, row),
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
        retry_url = self._workflow_url(record, "retry") + _kept(request)
        return {
            "attempts": row.attempts,
            "last_error": row.last_error,
            "retry_at": row.retry_at,
            "next_attempt_at": next_attempt_at(record, row),
            "halted": row.halted,
            "retry_url": retry_url if row.halted and may_change else "",
        }

    def workflow_retry_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Give a halted automatic step a fresh budget and queue it now."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        record = self._workflow_record(request, object_id)
        step = type(record).workflow.step_label(record.current_step)
        if retry_now(record):
            messages.success(request, f"{step}: queued again.")
        else:  # pressed twice, or the step ran or was left since the page was shown
            messages.warning(request, f"Nothing to retry: {record} is in {step}, not halted.")
        return redirect(self._change_url(record) + _kept(request))

    def _stranded_panel(self, request: HttpRequest, record: Any, step: str) -> dict[str, Any]:
        workflow = type(record).workflow
        return {
            "current": step,
            "current_label": step,
            "kind": "no longer declared",
            "stranded": True,
            "actions": [],
            "undo_url": "",
            "undo_label": "",
            "undo_row": "",
            "undo_asks": False,
            "attempt": None,
            "diagram": mark_safe(graph.svg(workflow)),  # built from escaped names
            "pending": [],
            "history": self._workflow_history(request, record),
            "logged": workflow.log is True,
            "zone": times_in(zone_of(record)),
        }

    def _workflow_history(self, request: HttpRequest, record: Any) -> Any:
        """A page of the record's log, newest first, each row with its steps' labels, and
        what it did and why in words."""
        page = Paginator(
            record.history()
            .select_related("actor", "reverses__reverses")
            .order_by("-occurred_at", "-id"),
            self.workflow_history_per_page,
        ).get_page(request.GET.get("history_page"))
        workflow = type(record).workflow
        page.object_list = list(page.object_list)
        for row in page.object_list:
            row.from_label = workflow.step_label(row.from_state) if row.from_state else ""
            row.to_label = workflow.step_label(row.to_state)
            row.label = row_label(workflow, row)
        return page

    def _workflow_url(self, record: Any, view: str, *args: str) -> str:
        info = self.model._meta.app_label, self.model._meta.model_name
        return reverse(
            f"{self.admin_site.name}:{info[0]}_{info[1]}_workflow_{view}", args=[record.pk, *args]
        )

    # The views ----------------------------------------------------------------------

    def workflow_transition_view(
        self, request: HttpRequest, object_id: str, name: str
    ) -> HttpResponse:
        """GET: the page asking for accepted values or confirming a final move;
        POST: run the transition for the logged-in user."""
        record = self._workflow_record(request, object_id)
        workflow = type(record).workflow
        if request.method == "POST" and request.POST.get("step", record.current_step) != (
            record.current_step
        ):
            return self._stale(request, record)
        declared = workflow.transition(record.current_step, name)
        if declared is not None and name not in self.get_workflow_transitions(request, record):
            if self._condition_unmet(request, record, declared):
                label = workflow.transition_label(name, record.current_step)
                reason = unmet_reason(declared, type(record))
                messages.error(request, f"“{label}” is not possible now. {reason}")
                return redirect(self._change_url(record) + _kept(request))
            raise PermissionDenied
        if request.method == "GET" and not self._asks(request, record, declared):
            # a stale link, a reload, a second tab: back to the record
            if declared is None:
                step = workflow.step_label(record.current_step)
                messages.error(request, f"{step} offers no “{workflow.transition_label(name)}”.")
            return redirect(self._change_url(record) + _kept(request))
        values = self.get_workflow_transition_values(request, record, declared) if declared else {}
        form_class = (
            self.get_workflow_transition_form(request, record, declared)
            if _asked(declared, values)
            else None
        )
        if request.method == "GET":
            empty = dict.fromkeys(_asked(declared, values))  # never a value of an earlier round
            form = form_class(instance=record, initial=empty) if form_class else None
            return self._workflow_form(request, record, declared, form, CommentForm())
        if request.method != "POST":
            return HttpResponseNotAllowed(["GET", "POST"])
        accepted = dict(values)
        if form_class is not None:
            form = form_class(request.POST, instance=record)
            if not form.is_valid():
                comment_form = CommentForm(request.POST)
                return self._workflow_form(request, record, declared, form, comment_form)
            accepted.update({f: form.cleaned_data[f] for f in _asked(declared, values)})
            record.refresh_from_db()  # the form wrote the values onto the instance
        comment = _comment(request)
        call = partial(record.transition, name, actor=request.user, comment=comment, **accepted)
        label = workflow.transition_label(name, record.current_step)
        return self._workflow_call(request, record, call, f"{label}: now in")

    def workflow_undo_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: the page confirming an undo or redo that moves into a final step;
        POST: undo (or redo) the move the button named, for the logged-in user."""
        if request.method not in ("GET", "POST"):
            return HttpResponseNotAllowed(["GET", "POST"])
        record = self._workflow_record(request, object_id)
        row = undoable(record, request.user)
        posted = request.POST.get("row") if request.method == "POST" else request.GET.get("row")
        if row is not None and posted and posted != str(row.pk):  # pressed twice, or stale
            return self._stale(request, record)
        workflow = type(record).workflow
        if request.method == "GET":
            if row is None:  # a stale link: say why, as a post would
                self._undo_refused(request, record)
            if row is None or not _is_terminal(workflow, row.from_state):
                return redirect(self._change_url(record) + _kept(request))
            return self._undo_form(request, record, row)
        redo = row is not None and row.description.startswith("undo of")
        call = partial(record.undo, actor=request.user)
        return self._workflow_call(
            request, record, call, f"{'Redone' if redo else 'Undone'}: now in"
        )

    def _undo_refused(self, request: HttpRequest, record: Any) -> None:
        try:
            undoable_row(record, request.user)
        except UndoNotPermitted as error:
            messages.error(request, self._undo_refusal(record, error))
        except WorkflowPermissionDenied as error:
            raise PermissionDenied from error

    def _stale(self, request: HttpRequest, record: Any) -> HttpResponse:
        """A button pressed on a page older than the record: nothing is done."""
        step = type(record).workflow.step_label(record.current_step)
        messages.warning(
            request,
            f"Nothing done: {record} changed since the page was shown; it is in {step} now.",
        )
        return redirect(self._change_url(record) + _kept(request))

    def _workflow_call(self, request: HttpRequest, record: Any, call: Any, done: str) -> Any:
        """Run a workflow call for the logged-in user; its errors become admin messages."""
        try:
            call()
        except WorkflowPermissionDenied as error:
            raise PermissionDenied from error
        except UndoNotPermitted as error:
            messages.error(request, self._undo_refusal(record, error))
        except StaleRecord:  # another writer between loading and writing: as a stale page
            return self._moved_meanwhile(request, record)
        except WorkflowError as error:
            messages.error(request, str(error))
        else:
            step = type(record).workflow.step_label(record.current_step)
            messages.success(request, f"{done} {step}.")
        return redirect(self._change_url(record) + _kept(request))

    def _moved_meanwhile(self, request: HttpRequest, record: Any) -> HttpResponse:
        """The record changed, or was deleted, while a button ran: nothing was done."""
        current = self.get_queryset(request).filter(pk=record.pk).first()
        if current is None:
            messages.warning(request, f"Nothing done: {record} no longer exists.")
            info = self.model._meta.app_label, self.model._meta.model_name
            changelist = reverse(f"{self.admin_site.name}:{info[0]}_{info[1]}_changelist")
            filters = request.GET.get("_changelist_filters")  # back where the user was
            return redirect(f"{changelist}?{filters}" if filters else changelist)
        return self._stale(request, current)

    def _undo_refusal(self, record: Any, error: UndoNotPermitted) -> str:
        """ "Redo refused: only the person who made the move may undo it." """
        row = last_step_change(record) if error.reason != "undo_not_enabled" else None
        verb = "Undo"
        if row is not None and row.triggered_by == TransitionLog.Trigger.UNDO:
            verb = "Redo" if row.description.startswith("undo of") else "Undo"
        words = self.workflow_undo_refusals.get(error.reason)
        within = getattr(type(record).workflow.undo, "within", None)
        text = str(words).format(within=within) if words else str(error)
        return f"{verb} refused: {text}."

    def _condition_unmet(self, request: HttpRequest, record: Any, transition: Any) -> bool:
        """Whether the user's policy allows ``transition`` but its ``when`` does not hold
        now: a button that went stale, not a forbidden one."""
        from ..engine import available  # the runtime, loaded by a request, not with the admin

        seen = copy.copy(record)
        for field, value in self.get_workflow_transition_values(
            request, record, transition
        ).items():
            setattr(seen, field, value)
        workflow = type(record).workflow
        policy = workflow.policy_for(record.current_step, transition.name)
        return allowed(policy, request.user, seen, transition.name) and not available(
            seen, transition
        )

    def get_workflow_transitions(self, request: HttpRequest, record: Any) -> list[str]:
        """The transitions this admin offers: those the user may call, with the values
        ``get_workflow_transition_values`` fills in. Override to hide some (a transition
        hidden here is refused here too, and stays callable in code)."""
        from ..engine import permits

        transitions = type(record).workflow.transitions_in(record.current_step)
        return [
            t.name
            for t in transitions
            if permits(
                record, t, request.user, self.get_workflow_transition_values(request, record, t)
            )
        ]

    def get_workflow_transition_values(
        self, request: HttpRequest, record: Any, transition: Any
    ) -> dict[str, Any]:
        """Accepted values this admin fills in itself, never asked for: e.g. the signer
        taken from ``request.user``. The policy and ``when`` see them, and the form
        asks only for the rest. Default: none."""
        return {}

    def _asks(self, request: HttpRequest, record: Any, transition: Any) -> bool:
        """Whether a button opens a page first: to ask for values, or to confirm a final move."""
        if transition is None:
            return False
        values = self.get_workflow_transition_values(request, record, transition)
        workflow = type(record).workflow
        final = any(_is_terminal(workflow, t) for t in transition.targets)
        return bool(_asked(transition, values)) or final

    def get_workflow_transition_form(
        self, request: HttpRequest, record: Any, transition: Any
    ) -> type[forms.ModelForm]:
        """The form asking for a transition's accepted values; override to customise it.

        Fields get the admin's widgets (date and time pickers, raw id and
        autocomplete fields as declared on this ``ModelAdmin``). Every accepted
        value is required (a checkbox excepted): a transition that accepts a
        value needs it, and an empty one would be written as is.
        """
        values = self.get_workflow_transition_values(request, record, transition)
        form_class = modelform_factory(
            type(record),
            fields=_asked(transition, values),
            formfield_callback=partial(self.formfield_for_dbfield, request=request),
        )
        for field in form_class.base_fields.values():
            if not isinstance(field, forms.BooleanField):
                field.required = True
        return form_class

    def _workflow_record(self, request: HttpRequest, object_id: str) -> Any:
        record = self.get_object(request, unquote(object_id))
        if record is None:
            raise Http404
        if not self.has_change_permission(request, record):  # moving a record changes it
            raise PermissionDenied
        return record

    def _workflow_form(
        self, request: HttpRequest, record: Any, transition: Any, form: Any, comment_form: Any
    ) -> HttpResponse:
        workflow = type(record).workflow
        label = workflow.transition_label(transition.name, record.current_step)
        final = [workflow.step_label(t) for t in transition.targets if _is_terminal(workflow, t)]
        context = {
            **self._confirming(request, record, label),
            "form": form,
            "comment_form": comment_form,
            "media": self.media + (form.media if form else forms.Media()),
            "moving": f"“{label}”",
            "final_steps": final,
            "undoable": transition.undoable,
            "hidden": {"step": record.current_step},
        }
        return TemplateResponse(request, "admin/django_workflow/transition_form.html", context)

    def _undo_form(self, request: HttpRequest, record: Any, row: Any) -> HttpResponse:
        """The page confirming an undo or redo that moves into a final step."""
        workflow = type(record).workflow
        label = _undo_label(record, row)
        context = {
            **self._confirming(request, record, label),
            "form": None,
            "media": self.media,
            "moving": label,
            "final_steps": [workflow.step_label(row.from_state)],
            "undoable": True,
            "hidden": {"row": row.pk},
        }
        return TemplateResponse(request, "admin/django_workflow/transition_form.html", context)

    def _confirming(self, request: HttpRequest, record: Any, label: str) -> dict[str, Any]:
        """What every page confirming a move of ``record`` shows: title, breadcrumbs, Back."""
        info = self.model._meta.app_label, self.model._meta.model_name
        site = self.admin_site.name
        return {
            **self.admin_site.each_context(request),
            "title": f"{label}: {record}",
            "opts": self.model._meta,
            "original": record,
            "transition_label": label,
            "change_url": self._change_url(record) + _kept(request),
            "changelist_url": reverse(f"{site}:{info[0]}_{info[1]}_changelist"),
            "app_url": reverse(f"{site}:app_list", kwargs={"app_label": info[0]}),
            "index_url": reverse(f"{site}:index"),
        }

    def _change_url(self, record: Any) -> str:
        info = self.model._meta.app_label, self.model._meta.model_name
        return reverse(f"{self.admin_site.name}:{info[0]}_{info[1]}_change", args=[record.pk])


#: How the panel names a step's kind.
KINDS = {
    "automatic": "runs by itself",
    "manual": "waits for a person",
    "wait": "waits for a deadline",
    "terminal": "final",
}


def _undo_label(record: Any, row: Any) -> str:
    """ "Undo “Reject”" or "Redo “Reject”": named for what the undo of ``row`` reverses."""
    verb, name = "Undo", row.transition_name
    if row.triggered_by == TransitionLog.Trigger.UNDO:  # reversing an undo, or a redo
        done, _, name = row.description.partition(" of ")
        verb = "Redo" if done == "undo" else "Undo"
    return f"{verb} “{type(record).workflow.transition_label(name)}”"


def _is_terminal(workflow: Any, step: str) -> bool:
    return step in workflow.steps and workflow.steps[step].is_terminal


def _asked(transition: Any, values: dict[str, Any]) -> list[str]:
    """The accepted fields the form asks for: those the admin does not fill in itself."""
    return [name for name in transition.accept if name not in values] if transition else []


def _kept(request: HttpRequest) -> str:
    """The changelist filters the admin carries from page to page, as a query string."""
    filters = request.GET.get("_changelist_filters")
    return f"?{urlencode({'_changelist_filters': filters})}" if filters else ""


def describe_deadline(
    deadline: Any, record: Any, now: Any = None, named: bool = True, zone: Any = None
) -> str:
    """``"Reminder due Wed 2 Dec 16:00 CET (in 2 d)"``: the deadline's label, in the
    record's time zone (the workflow's ``time_zone``, or ``time_zone_field``) or in
    ``zone`` when given, with how far away it is; the year too when it is not this year.
    ``named=False`` leaves the zone out, for a screen that names it once. In the active
    language."""
    zone, now = zone or zone_of(record), now or timezone.now()
    due = deadline.due_at.astimezone(zone)
    shape = "D j M H:i" if due.year == now.astimezone(zone).year else "D j M Y H:i"
    when = dateformat.format(due, shape) + (f" {due.tzname()}" if named else "")
    left = deadline.due_at - now
    if left.total_seconds() > 0:
        span = gettext("in %(span)s") % {"span": _span(left)}
    else:
        span = gettext("overdue by %(span)s") % {"span": _span(-left)}
    label = deadline.label or humanise(deadline.name)
    return gettext("%(deadline)s due %(when)s (%(span)s)") % {
        "deadline": label,
        "when": when,
        "span": span,
    }


#: What the workflow's admin pages show for nothing: the admin's own empty value.
NOTHING = "-"


def _time_in_step(figures: Any) -> dict[str, str] | None:
    """The overview's median and p90 time in step, and their business hours as a hint."""
    if figures is None or not figures.stays:
        return None
    spans = [
        NOTHING if hours is None else _span(timedelta(hours=hours))
        for hours in (
            figures.median_hours,
            figures.p90_hours,
            figures.median_business_hours,
            figures.p90_business_hours,
        )
    ]
    count = figures.stays
    hint = ngettext(
        "%(count)d stay; in business hours: median %(median)s, p90 %(p90)s",
        "%(count)d stays; in business hours: median %(median)s, p90 %(p90)s",
        count,
    ) % {"count": count, "median": spans[2], "p90": spans[3]}
    if figures.median_hours is None:  # a terminal step: entered, never left
        hint = ngettext(
            "%(count)d record entered; a terminal step has no time in step",
            "%(count)d records entered; a terminal step has no time in step",
            count,
        ) % {"count": count}
    return {"median": spans[0], "p90": spans[1], "hint": hint}


def _span(length: timedelta) -> str:
    """A span in its two largest units: "2 d", "1 d 23 h", "3 h 5 min", "40 s"."""
    rest = int(length.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        count, rest = divmod(rest, size)
        if count and len(parts) < 2:
            parts.append(f"{count} {unit}")
        elif parts:
            break
    return " ".join(parts) or "0 s"
