"""The workflow as a graph: its edges, a layout, and text and SVG renderings.

The admin draws the SVG inline (no JavaScript, no network); ``manage.py
workflow_graph`` prints Mermaid or Graphviz dot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import Any

NODE_WIDTH, NODE_HEIGHT, COLUMN_GAP, ROW_GAP, MARGIN = 150, 36, 60, 22, 16

#: A step name Mermaid can take as an id once prefixed.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")
#: Mermaid's entity codes for what would end a quoted label or a statement.
_MERMAID_ESCAPES = str.maketrans({"#": "#35;", '"': "#quot;", ";": "#59;", "\n": " "})


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str
    kind: str  # "transition" | "success" | "error" | "timeout"


def edges(workflow: Any) -> list[Edge]:
    found: list[Edge] = []
    for name, step in workflow.steps.items():
        for transition in step.transitions:
            found += [Edge(name, to, transition.name, "transition") for to in transition.targets]
        for route in step.routes:
            found.append(Edge(name, route.to, "", "success"))
        if step.on_error is not None:
            found.append(Edge(name, step.on_error, "error", "error"))
        for timeout in step.timeouts:
            if timeout.transition_to is not None:
                found.append(Edge(name, timeout.transition_to, timeout.name, "timeout"))
    return [edge for edge in found if edge.target in workflow.steps]


def mermaid(workflow: Any) -> str:
    """A Mermaid state diagram.

    Each step is declared as ``state "name" as <id>`` and edges join the ids,
    so a step named after a Mermaid keyword (``end``, ``note``, ``state``, …)
    stays a step.
    """
    ids = mermaid_ids(workflow.steps)
    lines = ["stateDiagram-v2"]
    lines += [f'    state "{_mermaid_text(name)}" as {ids[name]}' for name in workflow.steps]
    if workflow.initial_step is not None:
        lines.append(f"    [*] --> {ids[workflow.initial_step]}")
    for edge in edges(workflow):
        label = f": {_mermaid_text(edge.label)}" if edge.label else ""
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
    lines = ["digraph workflow {", "    rankdir=LR;", "    node [shape=box, style=rounded];"]
    for name, step in workflow.steps.items():
        shape = ", peripheries=2" if step.is_terminal else ""
        lines.append(f'    "{name}" [label="{name}"{shape}];')
    for edge in edges(workflow):
        style = ", style=dashed" if edge.kind in ("error", "timeout") else ""
        lines.append(f'    "{edge.source}" -> "{edge.target}" [label="{edge.label}"{style}];')
    lines.append("}")
    return "\n".join(lines)


def layout(workflow: Any) -> dict[str, tuple[int, int]]:
    """Column = distance from the initial step; row = order within the column."""
    depth = {workflow.initial_step: 0} if workflow.initial_step else {}
    queue = list(depth)
    following = {
        name: [e.target for e in edges(workflow) if e.source == name] for name in workflow.steps
    }
    while queue:
        current = queue.pop(0)
        for target in following[current]:
            if target not in depth:
                depth[target] = depth[current] + 1
                queue.append(target)
    last = max(depth.values(), default=-1)
    for name in workflow.steps:  # unreachable steps go last
        depth.setdefault(name, last + 1)
    rows: dict[int, int] = {}
    positions = {}
    for name in workflow.steps:
        column = depth[name]
        positions[name] = (column, rows.get(column, 0))
        rows[column] = rows.get(column, 0) + 1
    return positions


def svg(workflow: Any, current: str | None = None) -> str:
    """An SVG of the steps and their edges, the current step marked with ``current``."""
    positions = layout(workflow)
    centre = {
        name: (
            MARGIN + column * (NODE_WIDTH + COLUMN_GAP) + NODE_WIDTH / 2,
            MARGIN + row * (NODE_HEIGHT + ROW_GAP) + NODE_HEIGHT / 2,
        )
        for name, (column, row) in positions.items()
    }
    width = MARGIN * 2 + (max(c for c, _ in positions.values()) + 1) * (NODE_WIDTH + COLUMN_GAP)
    height = MARGIN * 2 + (max(r for _, r in positions.values()) + 1) * (NODE_HEIGHT + ROW_GAP)
    parts = [
        f'<svg class="workflow-diagram" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="Workflow diagram">',
        '<defs><marker id="workflow-arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>',
    ]
    for edge in edges(workflow):
        parts.append(_edge(edge, centre))
    for name, step in workflow.steps.items():
        x, y = centre[name]
        classes = " ".join(
            c for c in ("step", step.kind, "current" if name == current else "") if c
        )
        parts.append(
            f'<g class="{classes}" data-step="{escape(name)}">'
            f'<rect x="{x - NODE_WIDTH / 2}" y="{y - NODE_HEIGHT / 2}" width="{NODE_WIDTH}" '
            f'height="{NODE_HEIGHT}" rx="8"/>'
            f'<text x="{x}" y="{y + 4}" text-anchor="middle">{escape(name)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _edge(edge: Edge, centre: dict[str, tuple[float, float]]) -> str:
    (x1, y1), (x2, y2) = centre[edge.source], centre[edge.target]
    if edge.source == edge.target:  # a self-loop: a small arc above the node
        top = y1 - NODE_HEIGHT / 2
        path = f"M {x1 - 20} {top} C {x1 - 30} {top - 30}, {x1 + 30} {top - 30}, {x1 + 20} {top}"
        label_x, label_y = x1, top - 24
    elif x2 < x1 or (x2 == x1 and y2 < y1):  # back to an earlier step: an arc below
        start_x, start_y = x1 - NODE_WIDTH / 2, y1 + NODE_HEIGHT / 4
        end_x, end_y = x2 + NODE_WIDTH / 2, y2 + NODE_HEIGHT / 4
        low = max(start_y, end_y) + NODE_HEIGHT
        path = f"M {start_x} {start_y} C {start_x - 30} {low}, {end_x + 30} {low}, {end_x} {end_y}"
        label_x, label_y = (start_x + end_x) / 2, low - 4
    else:
        start_x = x1 + (NODE_WIDTH / 2 if x2 > x1 else 0)
        end_x = x2 - (NODE_WIDTH / 2 if x2 > x1 else 0)
        start_y = y1 - NODE_HEIGHT / 4 if x2 > x1 else y1 + NODE_HEIGHT / 2
        end_y = y2 - NODE_HEIGHT / 4 if x2 > x1 else y2 - NODE_HEIGHT / 2
        middle = (start_x + end_x) / 2
        path = f"M {start_x} {start_y} C {middle} {start_y}, {middle} {end_y}, {end_x} {end_y}"
        label_x, label_y = middle, (start_y + end_y) / 2 - 4
    label = f'<text x="{label_x}" y="{label_y}" text-anchor="middle">{escape(edge.label)}</text>'
    return (
        f'<g class="edge {edge.kind}"><path d="{path}" marker-end="url(#workflow-arrow)"/>'
        f"{label if edge.label else ''}</g>"
    )
