"""The workflow as a graph: its edges, and their Mermaid and Graphviz dot texts.

``manage.py workflow_graph`` prints Mermaid or Graphviz dot; the admin draws
the same edges as inline SVG (the ``diagram_svg`` package, through ``svg`` here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.utils.translation import gettext

from .. import diagram_svg
from ..diagram_svg import (  # noqa: F401  # the drawing's names, where they were before
    CONDITION_CHARS,
    LEGEND_BESIDE_UP_TO,
    LINE_HEIGHT,
    Box,
    Diagram,
    _n,
    shorten,
    text_width,
)
from .conditions import describe

#: A step name Mermaid can take as an id once prefixed.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")
#: Mermaid's entity codes for what would end a quoted label or a statement.
_MERMAID_ESCAPES = str.maketrans({"#": "#35;", '"': "#quot;", ";": "#59;", ":": "#58;", "\n": " "})
#: How dot draws the edges other than a transition's or a success's.
_DOT_STYLES = {"error": ", style=dashed", "timeout": ", style=dashed", "join": ", style=bold"}
#: What would end a quoted Graphviz string.
_DOT_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": " "})


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str  # the name: the transition's or timeout's, "error" or ""
    kind: str  # "transition" | "success" | "error" | "timeout" | "join"
    text: str = ""  # what people read: the transition's label, "on error", …
    #: A route's condition in words, whole: "if score ≥ 3", "otherwise"; "" for an edge
    #: that is no choice between routes.
    condition: str = ""

    @property
    def caption(self) -> str:
        """The edge's label on one line, its condition cut short: "Triage, otherwise"."""
        return ", ".join(part for part in (self.text, shorten(self.condition)) if part)

    @property
    def title(self) -> str:
        """The label with the condition whole, for hovering over the edge: "" for an edge
        without a condition."""
        if not self.condition:
            return ""
        return ", ".join(part for part in (self.text, self.condition) if part)


def edges(workflow: Any) -> list[Edge]:
    found: list[Edge] = []
    for name, step in workflow.steps.items():
        for transition in workflow.transitions_in(name):
            text = str(workflow.transition_label(transition.name, name))
            if transition.routes:
                found += [
                    Edge(name, _to(route), transition.name, "transition", text, condition)
                    for route, condition in route_conditions(transition.routes, workflow.model)
                ]
            elif transition.to is not None:
                found.append(Edge(name, transition.to, transition.name, "transition", text))
        for route, condition in route_conditions(step.routes, workflow.model):
            found.append(Edge(name, _to(route), "", "success", condition=condition))
        if step.on_error is not None:
            found.append(Edge(name, step.on_error, "error", "error", "on error"))
        for timeout in step.timeouts:
            if timeout.transition_to is not None:
                text = str(workflow.deadline_label(name, timeout.name))
                found.append(Edge(name, timeout.transition_to, timeout.name, "timeout", text))
        for join in step.joins:
            found += join_edges(name, join)
    return [edge for edge in found if edge.target in workflow.steps]


def route_conditions(routes: Any, model: Any) -> list[tuple[Any, str]]:
    """Each of ``routes`` with its condition in words, as ``conditions.describe`` says it
    to people: "if score ≥ 3"; "if a condition holds" when it cannot say (a lambda); an
    unconditional route after others "otherwise". A lone unconditional route: ""."""
    found = []
    for position, route in enumerate(routes):
        when = getattr(route, "when", None)
        if when is None:
            found.append((route, gettext("otherwise") if position else ""))
            continue
        words = _described(when, model).strip().rstrip(".")
        if not words:
            found.append((route, gettext("if a condition holds")))
            continue
        if words[:1].isupper() and not words[1:2].isupper():  # "Paid in full." → "paid in full"
            words = words[0].lower() + words[1:]
        found.append((route, gettext("if %(condition)s") % {"condition": words}))
    return found


def _described(when: Any, model: Any) -> str:
    """``conditions.describe``, or ``""`` for what it cannot read (a ``Q`` of an expression,
    ``Q(Exists(...))``): the diagram is drawn on every change page and must not fail."""
    try:
        return describe(when, model if model is not None else _NoModel)
    except (TypeError, ValueError, AttributeError):
        return ""


def _to(route: Any) -> Any:
    """Where a route goes (``None`` for what is no route: no edge; the checks say why)."""
    return getattr(route, "to", None)


class _NoModel:
    """A workflow compiled without a model: a condition's fields read humanised."""

    class _meta:  # what conditions.describe reads on a model
        @staticmethod
        def get_field(name: str) -> Any:
            raise FieldDoesNotExist(name)


def join_edges(step: str, join: Any) -> list[Edge]:
    """A join's ways out, each labelled with its condition: "lines: all in packed, void"
    to ``to``, then "lines: any lost" to each ``any_in`` target."""
    children = str(join.related_name)
    all_in = (join.all_in,) if isinstance(join.all_in, str) else join.all_in
    done = gettext("%(children)s: all in %(steps)s") % {
        "children": children,
        "steps": ", ".join(str(name) for name in all_in),
    }
    found = [Edge(step, join.to, children, "join", done)]
    for child_step, target in join.any_in.items():
        words = gettext("%(children)s: any %(step)s") % {"children": children, "step": child_step}
        found.append(Edge(step, target, children, "join", words))
    return found


def mermaid(workflow: Any) -> str:
    """A Mermaid state diagram.

    Each step is declared as ``state "label" as <id>`` and edges join the ids,
    so a step named after a Mermaid keyword (``end``, ``note``, ``state``, …)
    stays a step. Steps and edges read as their labels, as in the dot output.
    """
    ids = mermaid_ids(workflow.steps)
    lines = ["stateDiagram-v2"]
    for name in workflow.steps:  # labelled as people read them, like the dot output
        lines.append(f'    state "{_mermaid_text(workflow.step_label(name))}" as {ids[name]}')
    if workflow.initial_step is not None:
        lines.append(f"    [*] --> {ids[workflow.initial_step]}")
    for edge in edges(workflow):
        label = f": {_mermaid_text(edge.caption)}" if edge.caption else ""
        lines.append(f"    {ids[edge.source]} --> {ids[edge.target]}{label}")
    for name, step in workflow.steps.items():
        if step.is_terminal:
            lines.append(f"    {ids[name]} --> [*]")
    return "\n".join(lines)


def mermaid_ids(steps: Any) -> dict[str, str]:
    """``s_<name>`` for a name of ASCII letters, digits and ``_``; else ``s<position>``.

    The prefix keeps every id off Mermaid's keywords, and the two forms differ in
    their second character, so no two steps share an id.
    """
    return {
        name: f"s_{name}" if _PLAIN_NAME.fullmatch(name) else f"s{position}"
        for position, name in enumerate(steps)
    }


def _mermaid_text(text: Any) -> str:
    return str(text).translate(_MERMAID_ESCAPES)


def dot(workflow: Any) -> str:
    """A Graphviz digraph: steps by name, labelled as people read them."""
    lines = ["digraph workflow {", "    rankdir=TB;", "    node [shape=box, style=rounded];"]
    for name, step in workflow.steps.items():
        shape = ", peripheries=2" if step.is_terminal else ""
        label = _dot_text(workflow.step_label(name))
        lines.append(f'    "{_dot_text(name)}" [label="{label}"{shape}];')
    for edge in edges(workflow):
        style = _DOT_STYLES.get(edge.kind, "")
        if edge.title and edge.title != edge.caption:  # a condition cut short: whole on hover
            style = f', tooltip="{_dot_text(edge.title)}"{style}'
        lines.append(
            f'    "{_dot_text(edge.source)}" -> "{_dot_text(edge.target)}" '
            f'[label="{_dot_text(edge.caption)}"{style}];'
        )
    lines.append("}")
    return "\n".join(lines)


def _dot_text(text: Any) -> str:
    return str(text).translate(_DOT_ESCAPES)


def layout(workflow: Any, current: str | None = None) -> Diagram:
    """The steps, the edges and the legend, placed top to bottom (``diagram_svg``)."""
    return diagram_svg.layout(workflow, edges(workflow), current)


def svg(workflow: Any, current: str | None = None) -> str:
    """An SVG of the steps and their edges, the current step marked with ``current``
    (``diagram_svg``)."""
    return diagram_svg.svg(workflow, edges(workflow), current)
