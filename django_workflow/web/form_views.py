"""The views the forms of ``{% workflow_actions %}`` post to: ``act`` runs a transition
for the logged-in user through ``record.transition()``, the call the admin's buttons
make; ``hold`` claims or releases the record through ``record.claim()`` and
``record.release()`` (docs/holding-work.md), answering alike.

What a post comes to:

- not a POST: 405; a record the user may not view (or none): 404; no change
  permission, or a transition never offered to this user on this record (no valid
  token): 403. Nothing is run and nothing is logged.
- offered, but refused now (the page went stale, the policy or ``when`` no longer
  allows it, no route holds, a value is bad, someone else claimed it first): the
  record's actions again, the refusal shown in place; nothing moved.
- a move that would end in a final step (as the call would decide it, routes and
  all), not yet confirmed: the confirmation, nothing moved.
- done: back to ``next`` (checked to stay on this site) with a message; or, for htmx
  (``HX-Request``), the fragment to swap in place and an ``HX-Trigger`` event
  ``workflowChanged`` naming the record.

Every answer to a post that is not done is 200, so htmx swaps it in (htmx leaves 4xx
answers out); the page without JavaScript shows it on a page of its own.

Imports the errors, ``web.access``, ``web.form_offers`` and ``web.fragments``.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from ..errors import (
    AlreadyClaimed,
    ConditionUnmet,
    NoRouteMatched,
    StaleRecord,
    WorkflowError,
    WorkflowPermissionDenied,
    staff_text,
)
from ..model.versions import workflow_of
from ..reading import claims_read
from ..reading.claims_read import CLAIM, RELEASE
from ..reading.votes_read import moves_with_one_more, recorded_vote
from . import fragments
from .access import find_record, may_change
from .form_offers import (
    HoldOffer,
    comment_form,
    offered_hold,
    offered_step,
    record_key,
    values_form,
)

#: The page a post answers without JavaScript when it is not done.
PAGE = "django_workflow/act.html"
NEXT, OFFER, CONFIRM = "workflow-next", "workflow-offer", "workflow-confirm"


def is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


@require_POST
def act(request: HttpRequest, app_label: str, model_name: str, pk: str, name: str) -> Any:
    """Run transition ``name`` on the record for the logged-in user (see the module)."""
    record = find_record(request.user, app_label, model_name, pk)
    if not may_change(request.user, record):
        raise PermissionDenied
    step = offered_step(request.POST.get(OFFER, ""), record, request.user, name)
    if step is None:  # never offered to this user on this record: a forged post
        raise PermissionDenied
    next_url = fragments.safe_next(request, request.POST.get(NEXT), record)
    workflow = workflow_of(record)
    transition = workflow.transition(step, name)
    if step != record.workflow.current_step or transition is None:
        return _stale(request, record, next_url)
    values = values_form(record, transition, request.POST)
    comment = comment_form(record, transition, request.POST)
    posted = {"name": name, "values": values, "comment": comment}
    if (values is not None and not values.is_valid()) or not comment.is_valid():
        note = {"level": "error", "text": "Nothing done: please correct the values below."}
        return _answer(request, record, next_url, note, posted)
    accepted = {f: values.cleaned_data[f] for f in transition.accept} if values else {}
    label = workflow.transition_label(name, step)
    confirmed = request.POST.get(CONFIRM) == name
    try:
        target = None if confirmed else _target(record, name, accepted, request.user)
        short = not moves_with_one_more(record, transition)  # a vote short of its quorum
        if target is not None and workflow.steps[target].is_terminal and not short:
            confirming = {**posted, "confirm": name, "to": workflow.step_label(target)}
            return _answer(request, record, next_url, None, confirming)
        record.workflow.transition(
            name, actor=request.user, comment=comment.cleaned_data["comment"], **accepted
        )
    except StaleRecord:
        return _stale(request, record, next_url)
    except WorkflowError as error:
        return _answer(request, record, next_url, _refusal(error, label), posted)
    if short:
        return _done(request, record, next_url, recorded_vote(record, transition, label))
    now_in = workflow.step_label(record.workflow.current_step)
    return _done(request, record, next_url, f"{label}: {record} is now in {now_in}.")


@require_POST
def hold(request: HttpRequest, app_label: str, model_name: str, pk: str, action: str) -> Any:
    """Claim or release the record for the logged-in user (see the module): Claim or
    Release must have been offered to them on this record, in its step."""
    record = find_record(request.user, app_label, model_name, pk)
    if action not in (CLAIM, RELEASE) or not workflow_of(record).assignment:
        raise Http404
    if not may_change(request.user, record):
        raise PermissionDenied
    token = request.POST.get(OFFER, "")
    offered = offered_hold(token, record, request.user, action)
    if offered is None:  # never offered to this user on this record: a forged post
        raise PermissionDenied
    next_url = fragments.safe_next(request, request.POST.get(NEXT), record)
    step, held_by = offered
    if step != record.workflow.current_step:
        return _stale(request, record, next_url)
    if action == RELEASE and held_by != claims_read.holder_id(record):
        return _changed_hands(request, record, next_url)
    label = HoldOffer(action, token).label
    try:
        getattr(record.workflow, action)(request.user)
    except StaleRecord:
        return _stale(request, record, next_url)
    except WorkflowError as error:
        return _answer(request, record, next_url, _refusal(error, label), None)
    done = "You hold" if action == CLAIM else "You let go of"
    return _done(request, record, next_url, f"{done} {record}.")


def _target(record: Any, name: str, accepted: dict[str, Any], actor: Any = None) -> str:
    """Where the call would take the record, decided as the call decides (its refusals
    too), without writing anything."""
    from ..engine import decide  # the runtime, loaded by a request, not on import

    return decide(record, name, actor, accepted).target


def _refusal(error: WorkflowError, label: Any) -> dict[str, str]:
    """The note saying why a call offered on the page was refused; nothing moved."""
    if isinstance(error, AlreadyClaimed):
        text = f"Nothing done: {error.holder} holds this record already."
    elif isinstance(error, WorkflowPermissionDenied):
        text = f"Nothing done: you may not “{label}” this record now."
    elif isinstance(error, ConditionUnmet):
        text = f"Nothing done: “{label}” is not possible now. {error.reason}"
    elif isinstance(error, NoRouteMatched):
        text = f"Nothing done: no way onward from “{label}” holds for this record."
    else:
        text = f"Nothing done: {staff_text(error)}"
    return {"level": "error", "text": text}


def _stale(request: HttpRequest, record: Any, next_url: str) -> HttpResponse:
    """The page was older than the record: say where it is now; nothing was done."""
    record.refresh_from_db()
    step = workflow_of(record).step_label(record.workflow.current_step)
    text = f"Nothing done: {record} changed since the page was shown; it is in {step} now."
    return _answer(request, record, next_url, {"level": "error", "text": text}, None)


def _changed_hands(request: HttpRequest, record: Any, next_url: str) -> HttpResponse:
    """A Release from a page shown while someone else held the record: letting go now
    would release the new holder's claim; nothing was done."""
    held = claims_read.holder(record)
    now = f"{held} holds it now" if held is not None else "nobody holds it now"
    text = f"Nothing done: {record} changed hands since the page was shown; {now}."
    return _answer(request, record, next_url, {"level": "error", "text": text}, None)


def _done(request: HttpRequest, record: Any, next_url: str, text: str) -> HttpResponse:
    if not is_htmx(request):
        messages.success(request, text, fail_silently=True)
        return redirect(next_url)
    response = _answer(request, record, next_url, {"level": "success", "text": text}, None)
    response["HX-Trigger"] = json.dumps({"workflowChanged": {"record": record_key(record)}})
    return response


def _answer(
    request: HttpRequest,
    record: Any,
    next_url: str,
    note: dict[str, str] | None,
    posted: dict[str, Any] | None,
) -> HttpResponse:
    """The record's actions fragment (htmx), or a page holding it (without JavaScript)."""
    fragment = fragments.actions(request, record, next_url=next_url, note=note, posted=posted)
    if is_htmx(request):
        return HttpResponse(fragment)
    back = not (posted and posted.get("confirm"))  # a confirmation has its own Back
    context = {"record": record, "fragment": fragment, "next": next_url, "back": back}
    return render(request, PAGE, context)
