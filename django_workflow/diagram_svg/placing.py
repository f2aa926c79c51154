"""The diagram's layout: a vertex per step and per edge label, placed top to bottom by
grandalf's layered (Sugiyama) layout, the algorithm Graphviz's ``dot`` uses.

Every labelled edge is routed through a vertex of its own sized by its text
(source → label → target), so the layout spaces the labels like the steps and no
text covers another. Positions land on the vertices' views, from which ``routing``
draws the lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from grandalf.graphs import Edge as _LayoutEdge
from grandalf.graphs import Vertex, graph_core
from grandalf.layouts import SugiyamaLayout

from .primitives import EDGE_FONT, NODE_FONT, Box, Text, shorten, wrap

#: Padding of a step's text in its box, the narrowest box, a line's longest run.
NODE_PAD_X, NODE_PAD_Y, NODE_MIN_WIDTH, NODE_WRAP = 12, 8, 80, 22
#: An edge label's margin inside its layout vertex, and its longest line.
LABEL_PAD_X, LABEL_PAD_Y, LABEL_WRAP = 3, 3, 20
#: A self-loop's room round its label: beside the text, above it, below it.
LOOP_GAP, LOOP_TOP, LOOP_BOTTOM = 6, 8, 14
#: Gaps between vertices of a layer, between layers, between components, around it all.
X_SPACE, Y_SPACE, COMPONENT_GAP, MARGIN = 24, 26, 40, 12
#: Width of a long edge where it crosses a layer; room between lines meeting a side.
DUMMY_WIDTH, PORT_GAP = 8, 14


@dataclass
class Node:
    name: str
    kind: str
    text: Text
    box: Box = field(default_factory=lambda: Box(0, 0, 0, 0))
    current: bool = False


class View:
    """What grandalf reads (``w``, ``h``) and writes (``xy``) on a vertex."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h, self.xy = w, h, (0.0, 0.0)


class EdgeView:
    """Where grandalf puts an edge's route: ``setpath`` gets the points it passes."""

    points: list[tuple[float, float]]

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = [tuple(point) for point in points]


@dataclass
class Label:
    """An edge label as a vertex of its own."""

    text: Text
    loop: bool
    vertex: Vertex
    drawn: bool = False


#: One workflow edge as laid out: the edge, its label vertex if any, and its joins.
Chain = tuple[Any, "Label | None", list[_LayoutEdge]]


def step_nodes(workflow: Any, current: str | None) -> dict[str, Node]:
    return {
        name: Node(
            name,
            step.kind,
            Text(wrap(str(workflow.step_label(name)), NODE_WRAP), NODE_FONT),
            current=name == current,
        )
        for name, step in workflow.steps.items()
    }


class Layered:
    """What grandalf lays out: a vertex per step and per edge label, joined per edge."""

    def __init__(self, nodes: dict[str, Node]) -> None:
        self.vertices: dict[str, Vertex] = {}
        for name, node in nodes.items():
            vertex = self.vertices[name] = Vertex(("step", name))
            vertex.view = View(
                max(NODE_MIN_WIDTH, node.text.width + 2 * NODE_PAD_X),
                node.text.height + 2 * NODE_PAD_Y,
            )
        self.all = list(self.vertices.values())
        self.joins: list[_LayoutEdge] = []
        self.labels: dict[tuple[str, str, str, str, bool], Label] = {}
        self.chains: list[Chain] = []

    def join(self, source: Vertex, target: Vertex) -> _LayoutEdge:
        joined = _LayoutEdge(source, target)
        joined.view = EdgeView()
        self.joins.append(joined)
        return joined

    def add(self, edge: Any) -> None:
        """``edge`` as joins: straight, or through its label's vertex (one per source,
        kind, text and condition, shared by the edges that read alike)."""
        vertices = self.vertices
        loop = edge.source == edge.target
        condition = getattr(edge, "condition", "")
        if not (edge.text or condition or loop):
            self.chains.append(
                (edge, None, [self.join(vertices[edge.source], vertices[edge.target])])
            )
            return
        key = (edge.source, edge.kind, edge.text, condition, loop)
        label = self.labels.get(key)
        first = label is None
        if label is None:
            label = self.labels[key] = self._label(edge.text, condition, loop)
        into = [self.join(vertices[edge.source], label.vertex)] if first else []
        out = [] if loop else [self.join(label.vertex, vertices[edge.target])]
        self.chains.append((edge, label, into + out))

    def _label(self, words: str, condition: str, loop: bool) -> Label:
        """The label's vertex: its words, then a route's condition on lines of its own,
        cut short (``shorten``; the whole of it is the edge's ``<title>``)."""
        parts = [words, shorten(condition)] if condition else [words]
        lines = tuple(line for part in parts if part for line in wrap(part, LABEL_WRAP))
        text = Text(lines or ("",), EDGE_FONT)
        vertex = Vertex(("label", len(self.labels)))
        if loop:  # room for the loop round the text
            size = (2 * loop_reach(text) + 8, text.height + LOOP_TOP + LOOP_BOTTOM)
        else:
            size = (text.width + 2 * LABEL_PAD_X, text.height + 2 * LABEL_PAD_Y)
        vertex.view = View(*size)
        self.all.append(vertex)
        return Label(text, loop, vertex)

    def widen(self) -> None:
        """Each step wide enough for its lines to meet it apart."""
        for vertex in self.vertices.values():
            lines = max(
                sum(j.v[0] is vertex for j in self.joins), sum(j.v[1] is vertex for j in self.joins)
            )
            vertex.view.w = max(vertex.view.w, PORT_GAP * lines + 20)

    def settle(self, nodes: dict[str, Node]) -> None:
        """Where grandalf placed the vertices, onto the steps' boxes and the labels' texts."""
        for name, node in nodes.items():
            view = self.vertices[name].view
            node.box = Box(view.xy[0], view.xy[1], view.w, view.h)
            node.text.x, node.text.y = view.xy
        for label in self.labels.values():
            view = label.vertex.view
            label.text.x = view.xy[0]
            label.text.y = view.xy[1]
            if label.loop:  # the loop passes under it
                label.text.y += (LOOP_TOP - LOOP_BOTTOM) / 2


def place(vertices: list[Vertex], joins: list[_LayoutEdge], start: Vertex | None) -> float:
    """Lay out each connected component, side by side, the one holding ``start``
    first; return the total width. Positions land in each vertex's ``view.xy``."""
    component = {id(v): i for i, v in enumerate(vertices)}

    def find(i: int) -> int:
        while component_of[i] != i:
            component_of[i] = component_of[component_of[i]]
            i = component_of[i]
        return i

    component_of = list(range(len(vertices)))
    for joined in joins:
        a, b = find(component[id(joined.v[0])]), find(component[id(joined.v[1])])
        if a != b:
            component_of[max(a, b)] = min(a, b)
    groups: dict[int, list[Vertex]] = {}
    for i, vertex in enumerate(vertices):
        groups.setdefault(find(i), []).append(vertex)
    ordered = sorted(groups.values(), key=lambda group: start not in group)
    left = MARGIN
    for group in ordered:
        members = {id(v) for v in group}
        # graph_core rather than Graph: Graph collects a component's edges in a set,
        # whose order (and so the drawing) would change from one run to the next.
        inside = [j for j in joins if id(j.v[0]) in members]
        core = graph_core(group, inside)
        first = start if start in group else None
        # Grandalf breaks the cycles depth first from the start: the edges that
        # return to a step on the current path (feedback) are laid out upwards.
        core.get_scs_with_feedback([first] if first is not None else None)
        sugiyama = _sugiyama(core, inside, first, [j for j in inside if j.feedback])
        placed = [v for layer in sugiyama.layers for v in layer]
        low = min(v.view.xy[0] - v.view.w / 2 for v in placed)
        high = max(v.view.xy[0] + v.view.w / 2 for v in placed)
        for v in placed:
            v.view.xy = (v.view.xy[0] - low + left, v.view.xy[1] + MARGIN)
        sugiyama.draw_edges()
        left += high - low + COMPONENT_GAP
    return left - COMPONENT_GAP + MARGIN


def _sugiyama(
    core: graph_core, joins: list[_LayoutEdge], start: Vertex | None, backwards: list
) -> SugiyamaLayout:
    """``core`` laid out with ``backwards`` pointing up, ``start`` on top if it can be.

    The roots are what no edge enters once ``backwards`` are turned round (passing
    grandalf a root that something enters would fail).
    """
    entered = {id(j.v[0] if j in backwards else j.v[1]) for j in joins}
    roots = sorted((v for v in core.sV if id(v) not in entered), key=lambda v: v is not start)
    sugiyama = SugiyamaLayout(core)
    sugiyama.xspace, sugiyama.yspace = X_SPACE, Y_SPACE
    sugiyama.dw, sugiyama.dh = DUMMY_WIDTH, DUMMY_WIDTH
    sugiyama.init_all(roots=roots, inverted_edges=backwards)
    sugiyama.draw(N=2.5)
    _separate(sugiyama)
    sugiyama.draw_edges()
    return sugiyama


def _separate(sugiyama: SugiyamaLayout) -> None:
    """Push apart what the layout left closer than ``X_SPACE`` within a layer."""
    for layer in sugiyama.layers:
        row = sorted(layer, key=lambda v: v.view.xy[0])
        for before, after in pairwise(row):
            least = before.view.xy[0] + (before.view.w + after.view.w) / 2 + X_SPACE
            if after.view.xy[0] < least:
                after.view.xy = (least, after.view.xy[1])


def loop_reach(text: Text) -> float:
    """How far a self-loop passes from the middle of its label (unlabelled, still round)."""
    return max(text.width, 16) / 2 + LOOP_GAP
