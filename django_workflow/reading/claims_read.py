"""Who holds a record, and who may act for the holder (``Workflow.assignment = True``).

Imports no model when loaded (the package's root imports the inbox, which reads this
while Django loads the apps): ``Absence`` is read inside the functions.

Reads only: the engine writes the ``assignee`` column (``engine.claims``, and every
step change clears it). A user acts for a holder when they are the holder, or when
the holder is away and named them the delegate (an active ``Absence``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q

from ..model.columns import ASSIGNED_AT, ASSIGNEE, ASSIGNEE_ID
from ..model.versions import workflow_of
from ..policies import allowed, has_perm

#: The policy name of who may assign records (``Workflow.policies["assign"]``).
ASSIGN = "assign"
#: What a person may do about who holds a record (``hold_offered``).
CLAIM, RELEASE = "claim", "release"
#: Where a record sits in a person's work, in page order (the admin's "My work", the
#: ``{% workflow_inbox %}`` tag); the last (no title) holds the records of a model
#: without holders.
HELD_BY_ME, UNCLAIMED, STOOD_IN, OTHER = (
    "Held by me",
    "Unclaimed",
    "Held by others I stand in for",
    "",
)
SECTIONS = (HELD_BY_ME, UNCLAIMED, STOOD_IN, OTHER)


def is_user(actor: Any) -> bool:
    """Whether ``actor`` is a saved user: only users hold records or stand in."""
    return isinstance(actor, get_user_model()) and actor.pk is not None


def holder_id(record: Any) -> Any:
    """The key of the user holding ``record`` (``None``: nobody)."""
    return getattr(record, ASSIGNEE_ID, None)


def holder(record: Any) -> Any:
    """The user holding ``record`` (``None``: nobody)."""
    return getattr(record, ASSIGNEE) if holder_id(record) is not None else None


def stands_in(actor: Any, user_id: Any, db: str | None = None) -> bool:
    """Whether ``actor`` is the delegate of an absence of ``user_id`` under way now."""
    if not is_user(actor) or user_id is None:
        return False
    from ..models import Absence

    absences = Absence.objects.using(db).active()
    return absences.filter(user_id=user_id, delegate_id=actor.pk).exists()


def acting_for(record: Any, actor: Any, db: str | None = None) -> tuple[bool, Any]:
    """Whether ``actor`` may act on what ``record``'s holder holds, and for whom: ``None``
    when the actor is the holder, the holder when the actor stands in for them."""
    held_by = holder_id(record)
    if held_by is None or not is_user(actor):
        return False, None
    if actor.pk == held_by:
        return True, None
    if stands_in(actor, held_by, db):
        return True, holder(record)
    return False, None


def stood_in_for(actor: Any) -> Any:
    """The users ``actor`` stands in for now, as a subquery."""
    from ..models import Absence

    return Absence.objects.active().filter(delegate_id=actor.pk).values("user_id")


def held_for(actor: Any) -> Q:
    """The records held by ``actor`` or by someone ``actor`` stands in for."""
    if not is_user(actor):
        return Q(pk__in=[])
    return Q(**{ASSIGNEE_ID: actor.pk}) | Q(**{f"{ASSIGNEE_ID}__in": stood_in_for(actor)})


def unheld() -> Q:
    return Q(**{f"{ASSIGNEE_ID}__isnull": True})


def claimable(record: Any, actor: Any) -> bool:
    """Whether ``actor`` may claim ``record`` now: nobody holds it, and the policies let
    the actor call one of its step's transitions."""
    workflow = workflow_of(record)
    if not workflow.assignment or holder_id(record) is not None or not is_user(actor):
        return False
    step = getattr(record, workflow.state_attribute)
    declared = workflow.steps.get(step)
    return declared is not None and not declared.is_terminal and may_work_on(record, actor)


def may_work_on(record: Any, actor: Any) -> bool:
    """Whether the policies let ``actor`` call at least one of the step's transitions
    (whoever holds it): who may claim a record."""
    workflow = workflow_of(record)
    step = getattr(record, workflow.state_attribute)
    return any(
        allowed(workflow.policy_for(step, t.name), actor, record, t.name)
        for t in workflow.transitions_in(step)
    )


def may_release(record: Any, actor: Any) -> bool:
    """Whether ``actor`` may let go of ``record``: its holder, a stand-in, or whoever the
    ``assign`` policy allows."""
    if acting_for(record, actor)[0]:
        return True
    return allowed(assign_policy(record), actor, record, ASSIGN)


def assign_policy(record: Any) -> Any:
    """``Workflow.policies["assign"]``, else the model's change permission."""
    workflow = workflow_of(record)
    if ASSIGN in workflow.policies:
        return workflow.policies[ASSIGN]
    meta = type(record)._meta
    return has_perm(f"{meta.app_label}.change_{meta.model_name}")


def section(record: Any, user: Any) -> str:
    """Which section of ``user``'s work ``record`` belongs in (``SECTIONS``)."""
    if not workflow_of(record).assignment:
        return OTHER
    held_by = holder_id(record)
    if held_by is None:
        return UNCLAIMED
    return HELD_BY_ME if held_by == user.pk else STOOD_IN


def hold_offered(record: Any, user: Any) -> str:
    """``CLAIM`` when ``user`` may claim ``record`` now, ``RELEASE`` when they may let go
    of it (its holder, a stand-in, or whom the ``assign`` policy allows), else ``""``:
    the rules ``record.claim()`` and ``record.release()`` apply."""
    if not workflow_of(record).assignment:
        return ""
    if holder_id(record) is None:
        return CLAIM if claimable(record, user) else ""
    return RELEASE if may_release(record, user) else ""


def leaving(workflow: Any, from_step: str, changes: dict[str, Any]) -> dict[str, Any]:
    """A step change's ``changes`` with the holder cleared when they take the record out
    of ``from_step``: the move writes it in its own ``UPDATE``. A self-loop keeps it."""
    step = changes.get(workflow.state_attribute)
    if not workflow.assignment or step is None or step == from_step:
        return changes
    return {**changes, ASSIGNEE_ID: None, ASSIGNED_AT: None}
