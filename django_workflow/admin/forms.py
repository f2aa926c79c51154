"""The forms a move asks for: the optional reason beside any move, and which of a
transition's accepted values the admin asks rather than fills in itself.

Imports nothing of the package.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest


class CommentForm(forms.Form):
    """The optional reason a page asks for beside a move; stored on the log row."""

    prefix = "workflow"
    comment = forms.CharField(
        label="Reason / comment",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Optional. Kept in the record's history.",
    )


def posted_comment(request: HttpRequest) -> str | None:
    """The reason posted with a move: ``""`` when none, ``None`` when it cannot be kept
    (the page is shown again with the form's error, and nothing moves)."""
    form = CommentForm(request.POST)
    return form.cleaned_data["comment"] if form.is_valid() else None


def asked(transition: Any, values: dict[str, Any]) -> list[str]:
    """The accepted fields the form asks for: those the admin does not fill in itself."""
    return [name for name in transition.accept if name not in values] if transition else []
