"""The admin's words for time and moves: the overview's time in step, a step's kind, an
undo button's name, and a page rendered in the zone it names; a deadline
(``describe_deadline``) and a span ("1 d 23 h") are ``wording``'s, named here too.

Imports ``wording`` (the engine's vote reader when asked); nothing here queries beyond
a record's own pending deadlines or writes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.template.response import TemplateResponse
from django.utils.translation import ngettext

from ..model.versions import workflow_of
from ..reading.wording import (  # noqa: F401
    describe_deadline,
    next_deadline,
    sla_clocks,
    sla_words,
    span,
)

#: How the panel names a step's kind.
KINDS = {
    "automatic": "runs by itself",
    "manual": "waits for a person",
    "wait": "waits for a deadline",
    "terminal": "final",
}

#: What the workflow's admin pages show for nothing: the admin's own empty value.
NOTHING = "-"


def time_in_step(figures: Any) -> dict[str, str] | None:
    """The overview's median and p90 time in step, and their business hours as a hint."""
    if figures is None or not figures.stays:
        return None
    spans = [
        NOTHING if hours is None else span(timedelta(hours=hours))
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


def undo_label(record: Any, row: Any) -> str:
    """ "Undo “Reject”" or "Redo “Reject”": named for what the undo of ``row`` reverses."""
    reversal = row.reversal()  # reversing an undo, or a redo
    name = reversal[1] if reversal else row.transition_name
    verb = "Redo" if row.undone_by_redo else "Undo"
    return f"{verb} “{workflow_of(record).transition_label(name)}”"


def vote_tallies(record: Any) -> list[dict[str, str]]:
    """Per ``quorum`` transition of the record's step: its label and "1 of 2 approvals:
    alice" (the voters of this stay, oldest first)."""
    from ..engine import votes

    workflow = workflow_of(record)
    tallies = []
    for transition in workflow.transitions_in(record.workflow.current_step):
        needed = votes.quorum(transition)
        if needed is None:
            continue
        voters = votes.voters(record, transition.name)
        count = ngettext(
            "%(count)d of %(quorum)d approval", "%(count)d of %(quorum)d approvals", needed
        ) % {"count": len(voters), "quorum": needed}
        names = ", ".join(str(voter) for voter in voters)
        text = f"{count}: {names}" if names else count
        tallies.append({"name": transition.name, "label": str(transition.title), "text": text})
    return tallies


def is_terminal(workflow: Any, step: str) -> bool:
    """Whether ``step`` is a declared final step: a move into it is confirmed first."""
    return step in workflow.steps and workflow.steps[step].is_terminal


def rendered(response: Any) -> Any:
    """A template response rendered now: inside the caller's ``timezone.override``."""
    if isinstance(response, TemplateResponse) and not response.is_rendered:
        response.render()
    return response
