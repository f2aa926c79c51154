"""The pages that move one record: a transition's button (asking for its accepted
values or confirming a final move first), undo and redo, "Retry now" for a halted
automatic step or on-enter effect; and the extension points deciding what a button offers and asks
(``get_workflow_transitions``, ``get_workflow_transition_values``,
``get_workflow_transition_form``).

Imports the errors, conditions, policies, ``log_rows_read``, ``engine.offers``, ``undo``
and ``halted_steps``' retry, and ``display``, ``forms``, ``site``; the engine inside the
methods that run it, never on import.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.forms import modelform_factory
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse

from ..errors import (
    StaleRecord,
    UndoNotPermitted,
    WorkflowError,
    WorkflowPermissionDenied,
    staff_text,
)
from ..model.conditions import unmet_reason
from ..model.versions import workflow_of
from ..policies import allowed
from ..reading.log_rows_read import last_step_change
from ..reading.votes_read import moves_with_one_more, recorded_vote
from ..worker.transport import enqueue_entry
from .display import is_terminal, undo_label
from .forms import CommentForm, asked, posted_comment
from .halted_steps import retry_now
from .site import confirming, kept, page_url


class WorkflowTransitionViews:
    """The ``WorkflowAdminMixin``'s views moving one record, and what they offer."""

    #: Why an undo or redo was refused, in words, by ``UndoNotPermitted.reason``.
    workflow_undo_refusals = {
        "undo_not_enabled": "this workflow has no undo",
        "no_history": "nothing has moved this record yet",
        "not_undoable": "its last move cannot be undone",
        "window_expired": "the time allowed to undo the move ({within}) has passed",
        "no_actor": "only the person who made the move may undo it",
        "different_actor": "only the person who made the move may undo it",
        "effect_ran": "the step it entered has already started its work",
        "cascaded": "its last move took related records with it",
        "joined": "its last move completed its parent's join, and the parent moved on",
    }

    # What a button offers and asks ----------------------------------------------------

    def get_workflow_transitions(self, request: HttpRequest, record: Any) -> list[str]:
        """The transitions this admin offers: those the user may call, with the values
        ``get_workflow_transition_values`` fills in. Override to hide some (a transition
        hidden here is refused here too, and stays callable in code)."""
        values_for = partial(self.get_workflow_transition_values, request, record)
        from ..engine.offers import offered  # the runtime, loaded by a request

        return [t.name for t in offered(record, request.user, values_for)]

    def get_workflow_transition_values(
        self, request: HttpRequest, record: Any, transition: Any
    ) -> dict[str, Any]:
        """Accepted values this admin fills in itself, never asked for: e.g. the signer
        taken from ``request.user``. The policy and ``when`` see them, and the form
        asks only for the rest. Default: none."""
        return {}

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
            fields=asked(transition, values),
            formfield_callback=partial(self.formfield_for_dbfield, request=request),
        )
        for field in form_class.base_fields.values():
            if not isinstance(field, forms.BooleanField):
                field.required = True
        return form_class

    def _asks(self, request: HttpRequest, record: Any, transition: Any) -> bool:
        """Whether a button opens a page first: to ask for values, or to confirm a final move."""
        if transition is None:
            return False
        values = self.get_workflow_transition_values(request, record, transition)
        workflow = workflow_of(record)
        final = any(is_terminal(workflow, t) for t in transition.targets)
        return bool(asked(transition, values)) or final

    def _condition_unmet(self, request: HttpRequest, record: Any, transition: Any) -> bool:
        """Whether the user's policy allows ``transition`` but its ``when`` does not hold
        now: a button that went stale, not a forbidden one."""
        from ..engine import (
            available,  # the runtime, loaded by a request, not with the admin
        )

        seen = copy.copy(record)
        for field, value in self.get_workflow_transition_values(
            request, record, transition
        ).items():
            setattr(seen, field, value)
        workflow = workflow_of(record)
        policy = workflow.policy_for(record.workflow.current_step, transition.name)
        return allowed(policy, request.user, seen, transition.name) and not available(
            seen, transition
        )

    # The views ------------------------------------------------------------------------

    def workflow_transition_view(
        self, request: HttpRequest, object_id: str, name: str
    ) -> HttpResponse:
        """GET: the page asking for accepted values or confirming a final move;
        POST: run the transition for the logged-in user."""
        record = self._workflow_record(request, object_id)
        workflow = workflow_of(record)
        if request.method == "POST" and request.POST.get("step", record.workflow.current_step) != (
            record.workflow.current_step
        ):
            return self._stale(request, record)
        declared = workflow.transition(record.workflow.current_step, name)
        if declared is not None and name not in self.get_workflow_transitions(request, record):
            if self._condition_unmet(request, record, declared):
                label = workflow.transition_label(name, record.workflow.current_step)
                reason = unmet_reason(declared, type(record))
                messages.error(request, f"“{label}” is not possible now. {reason}")
                return redirect(self._change_url(record) + kept(request))
            raise PermissionDenied
        if request.method == "GET" and not self._asks(request, record, declared):
            # a stale link, a reload, a second tab: back to the record
            if declared is None:
                step = workflow.step_label(record.workflow.current_step)
                messages.error(request, f"{step} offers no “{workflow.transition_label(name)}”.")
            return redirect(self._change_url(record) + kept(request))
        values = self.get_workflow_transition_values(request, record, declared) if declared else {}
        form_class = (
            self.get_workflow_transition_form(request, record, declared)
            if asked(declared, values)
            else None
        )
        if request.method == "GET":
            empty = dict.fromkeys(asked(declared, values))  # never a value of an earlier round
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
            accepted.update({f: form.cleaned_data[f] for f in asked(declared, values)})
            record.refresh_from_db()  # the form wrote the values onto the instance
        comment = posted_comment(request)
        if comment is None:
            return self._workflow_form(request, record, declared, None, CommentForm(request.POST))
        call = partial(
            record.workflow.transition, name, actor=request.user, comment=comment, **accepted
        )
        label = workflow.transition_label(name, record.workflow.current_step)
        if not moves_with_one_more(record, declared):  # a vote short of its quorum
            said = partial(recorded_vote, record, declared, label)
            return self._workflow_call(request, record, call, said)
        return self._workflow_call(request, record, call, f"{label}: now in")

    def workflow_undo_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: the page confirming an undo or redo that moves into a final step;
        POST: undo (or redo) the move the button named, for the logged-in user."""
        if request.method not in ("GET", "POST"):
            return HttpResponseNotAllowed(["GET", "POST"])
        record = self._workflow_record(request, object_id)
        from ..engine.undo import undoable  # the runtime, loaded by a request

        row = undoable(record, request.user)
        posted = request.POST.get("row") if request.method == "POST" else request.GET.get("row")
        if row is not None and posted and posted != str(row.pk):  # pressed twice, or stale
            return self._stale(request, record)
        workflow = workflow_of(record)
        if request.method == "GET":
            if row is None:  # a stale link: say why, as a post would
                self._undo_refused(request, record)
            if row is None or not is_terminal(workflow, row.from_state):
                return redirect(self._change_url(record) + kept(request))
            return self._undo_form(request, record, row)
        redo = row is not None and row.undone_by_redo
        call = partial(record.workflow.undo, actor=request.user)
        return self._workflow_call(
            request, record, call, f"{'Redone' if redo else 'Undone'}: now in"
        )

    def workflow_retry_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Give a halted automatic step a fresh budget and queue it now."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        record = self._workflow_record(request, object_id)
        step = workflow_of(record).step_label(record.workflow.current_step)
        if retry_now(record):
            messages.success(request, f"{step}: queued again.")
        else:  # pressed twice, or the step ran or was left since the page was shown
            messages.warning(request, f"Nothing to retry: {record} is in {step}, not halted.")
        return redirect(self._change_url(record) + kept(request))

    def workflow_retry_effect_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Give a halted ``on_enter`` effect of the record (``effect`` posted) a fresh budget
        and queue it now."""
        from ..engine.effects import retry_now as retry_effect_now

        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        record = self._workflow_record(request, object_id)
        posted = request.POST.get("effect", "")
        step = retry_effect_now(record, int(posted)) if posted.isdigit() else None
        if step is not None:
            workflow = workflow_of(record)
            enqueue_entry(type(record)._meta.label, record.pk, step, workflow.queue)
            messages.success(request, f"{workflow.step_label(step)} on entry: queued again.")
        else:  # pressed twice, or it ran or was retried since the page was shown
            messages.warning(request, f"Nothing to retry: that effect of {record} is not halted.")
        return redirect(self._change_url(record) + kept(request))

    # What the views answer --------------------------------------------------------------

    def _undo_refused(self, request: HttpRequest, record: Any) -> None:
        from ..engine.undo import undoable_row  # the runtime, loaded by a request

        try:
            undoable_row(record, request.user)
        except UndoNotPermitted as error:
            messages.error(request, self._undo_refusal(record, error))
        except WorkflowPermissionDenied as error:
            raise PermissionDenied from error

    def _stale(self, request: HttpRequest, record: Any) -> HttpResponse:
        """A button pressed on a page older than the record: nothing is done."""
        step = workflow_of(record).step_label(record.workflow.current_step)
        messages.warning(
            request,
            f"Nothing done: {record} changed since the page was shown; it is in {step} now.",
        )
        return redirect(self._change_url(record) + kept(request))

    def _workflow_call(self, request: HttpRequest, record: Any, call: Any, done: Any) -> Any:
        """Run a workflow call for the logged-in user; its errors become admin messages.
        ``done``: what success says before the step now, or a function saying all of it."""
        try:
            call()
        except WorkflowPermissionDenied as error:
            raise PermissionDenied from error
        except UndoNotPermitted as error:
            messages.error(request, self._undo_refusal(record, error))
        except StaleRecord:  # another writer between loading and writing: as a stale page
            return self._moved_meanwhile(request, record)
        except WorkflowError as error:
            messages.error(request, staff_text(error))
        else:
            step = workflow_of(record).step_label(record.workflow.current_step)
            messages.success(request, done() if callable(done) else f"{done} {step}.")
        return redirect(self._change_url(record) + kept(request))

    def _moved_meanwhile(self, request: HttpRequest, record: Any) -> HttpResponse:
        """The record changed, or was deleted, while a button ran: nothing was done."""
        current = self.get_queryset(request).filter(pk=record.pk).first()
        if current is None:
            messages.warning(request, f"Nothing done: {record} no longer exists.")
            changelist = page_url(self.admin_site, self.model, "changelist")
            filters = request.GET.get("_changelist_filters")  # back where the user was
            return redirect(f"{changelist}?{filters}" if filters else changelist)
        return self._stale(request, current)

    def _undo_refusal(self, record: Any, error: UndoNotPermitted) -> str:
        """ "Redo refused: only the person who made the move may undo it." """
        row = last_step_change(record) if error.reason != "undo_not_enabled" else None
        verb = "Redo" if row is not None and row.undone_by_redo else "Undo"
        words = self.workflow_undo_refusals.get(error.reason)
        within = getattr(workflow_of(record).undo, "within", None)
        text = str(words).format(within=within) if words else str(error)
        return f"{verb} refused: {text}."

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
        workflow = workflow_of(record)
        label = workflow.transition_label(transition.name, record.workflow.current_step)
        final = [workflow.step_label(t) for t in transition.targets if is_terminal(workflow, t)]
        if not moves_with_one_more(record, transition):  # a vote that leaves it where it is
            final = []
        context = {
            **self._confirming(request, record, label),
            "form": form,
            "comment_form": comment_form,
            "media": self.media + (form.media if form else forms.Media()),
            "moving": f"“{label}”",
            "final_steps": final,
            "undoable": transition.undoable,
            "hidden": {"step": record.workflow.current_step},
        }
        return TemplateResponse(request, "admin/django_workflow/transition_form.html", context)

    def _undo_form(self, request: HttpRequest, record: Any, row: Any) -> HttpResponse:
        """The page confirming an undo or redo that moves into a final step."""
        workflow = workflow_of(record)
        label = undo_label(record, row)
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
        return {
            **confirming(self, request, f"{label}: {record}"),
            "original": record,
            "transition_label": label,
            "change_url": self._change_url(record) + kept(request),
        }

    def _change_url(self, record: Any) -> str:
        return page_url(self.admin_site, self.model, "change", record.pk)
