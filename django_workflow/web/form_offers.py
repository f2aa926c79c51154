"""What a page outside the admin offers a user on one record, and how a post proves it
was offered: the transitions (``engine.offers.offered``, as the admin's buttons), the form
asking a transition's accepted values, the optional comment, whether a move needs
confirming, and the signed token each form carries.

On a model with holders (docs/holding-work.md) the page also offers Claim or Release
(``hold_offer``), as ``claims_read.hold_offered`` decides, the rule ``record.claim()`` and
``record.release()`` apply; its token is signed apart from the transitions' tokens and
also names who held the record, so a Release from a page older than a change of hands
is stale, never a release of the new holder's claim.

A token names the user, the record, the step and the transition it was offered in:
a post without a valid one was never offered to that user (forged, answered 403),
one whose step is not the record's step any more comes from a page that went stale
(a refusal shown in place). The token decides nothing else: the engine's call does.

Imports ``claims_read``, ``engine.offers`` and ``web.access``; the engine inside the calls.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core import signing
from django.forms import modelform_factory

from ..model.versions import workflow_of
from ..reading.claims_read import CLAIM, hold_offered, holder_id
from .access import may_change

#: Keeps these tokens apart from every other signed value of the project.
SALT = "django_workflow.web.offer"
#: Keeps the tokens of Claim and Release apart from the transitions' tokens.
HOLD_SALT = "django_workflow.web.hold"
#: The prefix of the fields a transition's form asks for.
VALUES_PREFIX = "values"


class CommentForm(forms.Form):
    """The optional comment beside a move; stored on the log row."""

    prefix = "workflow"
    comment = forms.CharField(
        label="Comment (optional, kept in the record's history)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 30}),
    )


@dataclass(frozen=True)
class Offer:
    """One transition a record offers the user: its name, label, whether it moves into
    a final step (``final_steps``: their labels), and the token its form posts."""

    name: str
    label: Any
    transition: Any
    final_steps: tuple[Any, ...]
    token: str

    @property
    def final(self) -> bool:
        return bool(self.final_steps)


def record_key(record: Any) -> str:
    """``"support.ticket:7"``: how tokens, fragments and events name a record."""
    return f"{record._meta.label_lower}:{record.pk}"


def offers(record: Any, user: Any) -> list[Offer]:
    """The transitions ``user`` may call on ``record`` now: none without the model's
    change permission, else what the engine ``permits`` (the admin's rule, §10.5)."""
    if not may_change(user, record):
        return []
    from ..engine.offers import offered  # the runtime, loaded by a request

    return [_offer(record, user, t) for t in offered(record, user)]


def _offer(record: Any, user: Any, transition: Any) -> Offer:
    workflow = workflow_of(record)
    step = record.workflow.current_step
    final = tuple(
        workflow.step_label(target)
        for target in transition.targets
        if target in workflow.steps and workflow.steps[target].is_terminal
    )
    token = signing.dumps([record_key(record), step, transition.name, user.pk], salt=SALT)
    return Offer(
        transition.name, workflow.transition_label(transition.name, step), transition, final, token
    )


@dataclass(frozen=True)
class HoldOffer:
    """Claim or Release, offered to the user on a record of a model with holders."""

    action: str
    token: str

    @property
    def label(self) -> str:
        return "Claim" if self.action == CLAIM else "Release"


def hold_offer(record: Any, user: Any) -> HoldOffer | None:
    """Claim or Release, when ``user`` may change ``record`` and ``claims_read.hold_offered``
    lets them; else ``None``."""
    if not may_change(user, record):
        return None
    action = hold_offered(record, user)
    if not action:
        return None
    payload = [record_key(record), record.workflow.current_step, action, user.pk, holder_id(record)]
    return HoldOffer(action, signing.dumps(payload, salt=HOLD_SALT))


def offered_hold(token: str, record: Any, user: Any, action: str) -> tuple[str, Any] | None:
    """The step ``token`` offered ``action`` (Claim or Release) in, to ``user`` on
    ``record``, and who held the record then; ``None`` when the token is missing,
    altered, or was issued for another user, record or action."""
    try:
        key, step, offered_action, user_pk, held_by = signing.loads(token or "", salt=HOLD_SALT)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    if (key, offered_action, user_pk) != (record_key(record), action, user.pk):
        return None
    return (step, held_by) if isinstance(step, str) else None


def offered_step(token: str, record: Any, user: Any, name: str) -> str | None:
    """The step ``token`` offered ``name`` in, to ``user`` on ``record``; ``None`` when
    the token is missing, altered, or was issued for another user, record or transition."""
    try:
        key, step, offered_name, user_pk = signing.loads(token or "", salt=SALT)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    if (key, offered_name, user_pk) != (record_key(record), name, user.pk):
        return None
    return step if isinstance(step, str) else None


def values_form(record: Any, transition: Any, data: Any = None) -> Any:
    """The form asking ``transition``'s accepted values (``None`` when it accepts none),
    bound to ``data`` when given. Every value is required (a checkbox excepted), as in
    the admin: a transition that accepts a value needs it. The form works on a copy, so
    validating it never changes ``record``."""
    if not transition.accept:
        return None
    form_class = modelform_factory(type(record), fields=list(transition.accept))
    for field in form_class.base_fields.values():
        if not isinstance(field, forms.BooleanField):
            field.required = True
    auto_id = f"id_{record._meta.label_lower.replace('.', '_')}_{record.pk}_{transition.name}_%s"
    empty = dict.fromkeys(transition.accept)  # never the value of an earlier round
    return form_class(
        data,
        instance=copy.copy(record),
        initial=None if data is not None else empty,
        prefix=VALUES_PREFIX,
        auto_id=auto_id,
    )


def comment_form(record: Any, transition: Any, data: Any = None) -> CommentForm:
    auto_id = f"id_{record._meta.label_lower.replace('.', '_')}_{record.pk}_{transition.name}_%s"
    return CommentForm(data, auto_id=auto_id)
