"""The diagram as a whole: the steps laid out, the lines routed and the legend placed
(``layout``), and the inline SVG of it all (``svg``): no JavaScript, no network."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from .legend import EDGE_KINDS, legend_rows, place_legend
from .placing import MARGIN, Layered, Node, place, step_nodes
from .primitives import Text, _n, step_shape
from .routing import Arrow, draw_arrows, route_chains


@dataclass
class Diagram:
    """Everything the SVG shows, positioned; ``texts`` is every text drawn."""

    width: float
    height: float
    nodes: list[Node]
    arrows: list[Arrow]
    legend: list[str]
    legend_texts: list[Text]

    @property
    def texts(self) -> list[Text]:
        labels = [arrow.label for arrow in self.arrows if arrow.label is not None]
        return [node.text for node in self.nodes] + labels + self.legend_texts


def layout(workflow: Any, edges: list[Any], current: str | None = None) -> Diagram:
    """The steps, the ``edges`` and the legend, placed top to bottom."""
    nodes = step_nodes(workflow, current)
    graph = Layered(nodes)
    for edge in edges:
        graph.add(edge)
    graph.widen()
    start = graph.vertices.get(workflow.initial_step) if workflow.initial_step else None
    width = place(graph.all, graph.joins, start)
    graph.settle(nodes)
    arrows = draw_arrows(graph.chains, route_chains(graph))
    height = max((v.view.xy[1] + v.view.h / 2 for v in graph.all), default=0) + MARGIN
    rows = legend_rows(
        {node.kind for node in nodes.values()},
        {edge.kind for edge, _, _ in graph.chains},
        current is not None and current in nodes,
    )
    width, height, legend, legend_texts = place_legend(rows, width, height)
    return Diagram(width, height, list(nodes.values()), arrows, legend, legend_texts)


def svg(workflow: Any, edges: list[Any], current: str | None = None) -> str:
    """An SVG of the steps and their edges, the current step marked with ``current``.

    Sized by ``viewBox`` and its natural ``width``/``height``, which the stylesheet
    keeps (the text stays 11 px and more): a diagram wider than its box scrolls inside
    it, as on a phone.
    """
    diagram = layout(workflow, edges, current)
    width, height = _n(diagram.width), _n(diagram.height)
    parts = [
        f'<svg class="workflow-diagram" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'font-family="sans-serif" role="img" aria-label="Workflow diagram">',
        "<defs>",
        *(
            f'<marker id="workflow-arrow-{kind}" class="{kind}" viewBox="0 0 10 10" refX="9" '
            f'refY="5" markerWidth="7" markerHeight="7" markerUnits="userSpaceOnUse" '
            f'orient="auto"><path d="M 0 0 L 10 5 L 0 10 z"/></marker>'
            for kind, _ in EDGE_KINDS
        ),
        "</defs>",
    ]
    for arrow in diagram.arrows:
        edge = arrow.edge
        label = arrow.label.svg() if arrow.label else ""
        # A route's whole condition, which its label may show cut short, on hover.
        title = getattr(edge, "title", "")
        title = f"<title>{escape(title)}</title>" if title else ""
        parts.append(
            f'<g class="edge {edge.kind}" data-source="{escape(edge.source)}" '
            f'data-target="{escape(edge.target)}">{title}<path d="{arrow.path}" '
            f'marker-end="url(#workflow-arrow-{edge.kind})"/>{label}</g>'
        )
    for node in diagram.nodes:
        classes = " ".join(c for c in ("step", node.kind, "current" if node.current else "") if c)
        shape = step_shape(node.kind, node.box)
        parts.append(
            f'<g class="{classes}" data-step="{escape(node.name)}">'
            f"<title>{escape(node.name)} ({node.kind})</title>{shape}{node.text.svg()}</g>"
        )
    parts += diagram.legend
    parts.append("</svg>")
    return "".join(parts)
