"""The admin's SVG of a workflow: text measured, laid out, routed and drawn.

It receives the workflow's steps and its edges (``graph.edges``) and knows
nothing else of the workflow; ``graph.svg`` and ``graph.layout`` call it. The
drawing is inline SVG, no JavaScript, no network.

The SVG is laid out top to bottom by grandalf's layered (Sugiyama) layout, the
algorithm Graphviz's ``dot`` uses. Every labelled edge is routed through a
vertex of its own sized by its text (source → label → target), so the layout
spaces the labels like the steps and no text covers another. Text widths are
estimated from the characters, generously (calibrated on DejaVu Sans, wider
than the usual admin fonts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from itertools import pairwise
from typing import Any

from grandalf.graphs import Edge as _LayoutEdge
from grandalf.graphs import Vertex, graph_core
from grandalf.layouts import SugiyamaLayout

#: Font sizes (px) of a step's name and of an edge's label, and the line height factor.
NODE_FONT, EDGE_FONT, LINE_HEIGHT = 12, 11, 1.3
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
#: Beyond this width the legend goes below the diagram instead of beside it (the
#: admin's panel is some 860 px wide in a 1280 px window with the navigation bar).
LEGEND_BESIDE_UP_TO = 860

#: Advance widths in em, a little above DejaVu Sans's (Debian's default sans-serif).
_NARROW, _SEMI, _WIDE = set("ijl|.,:;'!`"), set('frtI()[]{} -/"*'), set("mwMW@%")


def text_width(text: str, size: float) -> float:
    """A generous estimate of ``text``'s width in px at font ``size``."""
    ems = 0.0
    for char in text:
        if char in _NARROW:
            ems += 0.34
        elif char in _SEMI:
            ems += 0.44
        elif char in _WIDE:
            ems += 1.0
        elif char.isascii() and char.isupper():
            ems += 0.8
        elif char.isascii():
            ems += 0.65
        else:  # accented letters a little wider, CJK a full em
            ems += 1.0
    return ems * size * 1.04


def wrap(text: str, limit: int) -> tuple[str, ...]:
    """``text`` in lines of at most ``limit`` characters, broken at spaces (a longer
    word keeps a line of its own)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= limit:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return tuple(lines) or ("",)


@dataclass
class Box:
    """A rectangle by its centre and size."""

    x: float
    y: float
    w: float
    h: float

    @property
    def left(self) -> float:
        return self.x - self.w / 2

    @property
    def right(self) -> float:
        return self.x + self.w / 2

    @property
    def top(self) -> float:
        return self.y - self.h / 2

    @property
    def bottom(self) -> float:
        return self.y + self.h / 2

    def intersects(self, other: Box) -> bool:
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )


@dataclass
class Text:
    """Lines of text centred on a point; ``box`` is their estimated extent."""

    lines: tuple[str, ...]
    size: float
    x: float = 0.0
    y: float = 0.0

    @property
    def line_height(self) -> float:
        return round(self.size * LINE_HEIGHT, 1)

    @property
    def width(self) -> float:
        return max(text_width(line, self.size) for line in self.lines)

    @property
    def height(self) -> float:
        return self.line_height * len(self.lines)

    @property
    def box(self) -> Box:
        return Box(self.x, self.y, self.width, self.height)

    def line_boxes(self) -> list[Box]:
        top = self.y - self.height / 2
        return [
            Box(
                self.x,
                top + (i + 0.5) * self.line_height,
                text_width(line, self.size),
                self.line_height,
            )
            for i, line in enumerate(self.lines)
        ]

    def svg(self, css_class: str = "") -> str:
        top = self.y - self.height / 2
        spans = "".join(
            f'<tspan x="{_n(self.x)}" y="{_n(top + (i + 0.5) * self.line_height)}">'
            f"{escape(line)}</tspan>"
            for i, line in enumerate(self.lines)
        )
        cls = f' class="{css_class}"' if css_class else ""
        return (
            f'<text{cls} font-size="{_n(self.size)}" text-anchor="middle" '
            f'dominant-baseline="central">{spans}</text>'
        )


@dataclass
class Node:
    name: str
    kind: str
    text: Text
    box: Box = field(default_factory=lambda: Box(0, 0, 0, 0))
    current: bool = False


@dataclass
class Arrow:
    """One edge of the workflow as drawn: its path and, on the first edge sharing a
    label vertex, the label."""

    edge: Any  # a graph.Edge
    path: str
    label: Text | None = None


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


class _View:
    """What grandalf reads (``w``, ``h``) and writes (``xy``) on a vertex."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h, self.xy = w, h, (0.0, 0.0)


class _EdgeView:
    """Where grandalf puts an edge's route: ``setpath`` gets the points it passes."""

    points: list[tuple[float, float]]

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = [tuple(point) for point in points]


@dataclass
class _Label:
    """An edge label as a vertex of its own."""

    text: Text
    loop: bool
    vertex: Vertex
    drawn: bool = False


#: One workflow edge as laid out: the edge, its label vertex if any, and its joins.
_Chain = tuple[Any, "_Label | None", list[_LayoutEdge]]


def layout(workflow: Any, edges: list[Any], current: str | None = None) -> Diagram:
    """The steps, the ``edges`` and the legend, placed top to bottom."""
    nodes = _nodes(workflow, current)
    graph = _Layered(nodes)
    for edge in edges:
        graph.add(edge)
    graph.widen()
    start = graph.vertices.get(workflow.initial_step) if workflow.initial_step else None
    width = _place(graph.all, graph.joins, start)
    graph.settle(nodes)
    arrows = _arrows(graph.chains, _routes(graph))
    height = max((v.view.xy[1] + v.view.h / 2 for v in graph.all), default=0) + MARGIN
    rows = _legend_rows(
        {node.kind for node in nodes.values()},
        {edge.kind for edge, _, _ in graph.chains},
        current is not None and current in nodes,
    )
    width, height, legend, legend_texts = _place_legend(rows, width, height)
    return Diagram(width, height, list(nodes.values()), arrows, legend, legend_texts)


def _nodes(workflow: Any, current: str | None) -> dict[str, Node]:
    return {
        name: Node(
            name,
            step.kind,
            Text(wrap(str(workflow.step_label(name)), NODE_WRAP), NODE_FONT),
            current=name == current,
        )
        for name, step in workflow.steps.items()
    }


class _Layered:
    """What grandalf lays out: a vertex per step and per edge label, joined per edge."""

    def __init__(self, nodes: dict[str, Node]) -> None:
        self.vertices: dict[str, Vertex] = {}
        for name, node in nodes.items():
            vertex = self.vertices[name] = Vertex(("step", name))
            vertex.view = _View(
                max(NODE_MIN_WIDTH, node.text.width + 2 * NODE_PAD_X),
                node.text.height + 2 * NODE_PAD_Y,
            )
        self.all = list(self.vertices.values())
        self.joins: list[_LayoutEdge] = []
        self.labels: dict[tuple[str, str, str, bool], _Label] = {}
        self.chains: list[_Chain] = []

    def join(self, source: Vertex, target: Vertex) -> _LayoutEdge:
        joined = _LayoutEdge(source, target)
        joined.view = _EdgeView()
        self.joins.append(joined)
        return joined

    def add(self, edge: Any) -> None:
        """``edge`` as joins: straight, or through its label's vertex (one per source,
        kind and text, shared by the edges that read alike)."""
        vertices = self.vertices
        loop = edge.source == edge.target
        if not (edge.text or loop):
            self.chains.append(
                (edge, None, [self.join(vertices[edge.source], vertices[edge.target])])
            )
            return
        key = (edge.source, edge.kind, edge.text, loop)
        label = self.labels.get(key)
        first = label is None
        if label is None:
            label = self.labels[key] = self._label(edge.text, loop)
        into = [self.join(vertices[edge.source], label.vertex)] if first else []
        out = [] if loop else [self.join(label.vertex, vertices[edge.target])]
        self.chains.append((edge, label, into + out))

    def _label(self, words: str, loop: bool) -> _Label:
        text = Text(wrap(words, LABEL_WRAP), EDGE_FONT)
        vertex = Vertex(("label", len(self.labels)))
        if loop:  # room for the loop round the text
            size = (2 * _reach(text) + 8, text.height + LOOP_TOP + LOOP_BOTTOM)
        else:
            size = (text.width + 2 * LABEL_PAD_X, text.height + 2 * LABEL_PAD_Y)
        vertex.view = _View(*size)
        self.all.append(vertex)
        return _Label(text, loop, vertex)

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


def _routes(graph: _Layered) -> list[list[list[tuple[float, float]]]]:
    """Per chain, its lines' points, their ends spread along the sides they meet."""
    ports = _Ports()
    routes: list[list[list[tuple[float, float]]]] = []
    for edge, label, chain in graph.chains:
        if label is not None and label.loop:
            node, around = graph.vertices[edge.source].view, label.vertex.view
            ends = [(node.xy[0], node.xy[1]), (node.xy[0], node.xy[1])]
            reach = _reach(label.text)
            ports.add(node, ends, 0, around.xy, order=-1, at=around.xy[0] - reach)
            ports.add(node, ends, 1, around.xy, order=1, at=around.xy[0] + reach)
            routes.append([ends])
            continue
        lines = []
        for joined in chain:
            points = list(joined.view.points)
            ports.add(joined.v[0].view, points, 0, points[1])
            ports.add(joined.v[1].view, points, -1, points[-2])
            lines.append(points)
        routes.append(lines)
    ports.spread()
    return routes


def _arrows(chains: list[_Chain], routes: list[list[list[tuple[float, float]]]]) -> list[Arrow]:
    """Each edge drawn along its route; a shared label shown on the first edge only."""
    arrows = []
    for (edge, label, _), lines in zip(chains, routes, strict=True):
        shown = None
        if label is not None and not label.drawn:
            label.drawn, shown = True, label.text
        if label is not None and label.loop:
            path = _loop(lines[0], label)
        else:
            path = " ".join(_curve(points) for points in lines)
        arrows.append(Arrow(edge, path, shown))
    return arrows


def _place_legend(
    rows: list[tuple], width: float, height: float
) -> tuple[float, float, list[str], list[Text]]:
    """The legend beside the diagram in a column, or below it in rows as wide as it;
    the drawing's new width and height, the legend's parts and texts."""
    column = _legend_cells(rows, None)
    legend_w, legend_h = _extent(column)
    if width + legend_w + X_SPACE - MARGIN <= LEGEND_BESIDE_UP_TO:  # beside, in a column
        cells, left, top = column, width + X_SPACE - MARGIN, MARGIN
        width += legend_w + X_SPACE - MARGIN
        height = max(height, legend_h + 2 * MARGIN)
    else:  # below, in rows as wide as the diagram
        cells, left, top = _legend_cells(rows, width - 2 * MARGIN), MARGIN, height
        legend_w, legend_h = _extent(cells)
        width = max(width, legend_w + 2 * MARGIN)
        height += legend_h + MARGIN
    legend, legend_texts = _legend(cells, left, top) if rows else ([], [])
    return width, height, legend, legend_texts


def _place(vertices: list[Vertex], joins: list[_LayoutEdge], start: Vertex | None) -> float:
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


class _Ports:
    """Where lines meet the top and bottom sides of the vertices: each line at the
    point it aims for, spread apart when several meet one side."""

    def __init__(self) -> None:
        self.sides: dict[tuple[int, bool], tuple[_View, list[tuple]]] = {}

    def add(
        self,
        view: _View,
        points: list[tuple[float, float]],
        index: int,
        towards: tuple[float, float],
        order: float = 0,
        at: float | None = None,
    ) -> None:
        """``points[index]`` becomes a port on ``view``, on the side facing ``towards``:
        at x ``at``, else where the line from the centre to ``towards`` crosses that
        side; or as near as the others allow. Ports keep the order of what they face
        (then ``order``), so lines leaving one side do not cross."""
        below = towards[1] >= view.xy[1]
        self.sides.setdefault((id(view), below), (view, []))[1].append(
            (towards[0], order, _aim(view, towards) if at is None else at, points, index)
        )

    def spread(self) -> None:
        for (_, below), (view, ends) in self.sides.items():
            ends.sort(key=lambda end: end[:2])
            inset = min(10.0, view.w / 4)
            low, high = view.xy[0] - view.w / 2 + inset, view.xy[0] + view.w / 2 - inset
            y = view.xy[1] + (view.h / 2 if below else -view.h / 2)
            for x, (*_, points, index) in zip(
                _spread([end[2] for end in ends], low, high), ends, strict=True
            ):
                points[index] = (x, y)


def _aim(view: _View, towards: tuple[float, float]) -> float:
    """Where a line from ``view``'s centre to ``towards`` crosses its top or bottom."""
    (x, y), (tx, ty) = view.xy, towards
    return x + (tx - x) * (view.h / 2) / abs(ty - y) if ty != y else x


def _spread(xs: list[float], low: float, high: float, gap: float = PORT_GAP) -> list[float]:
    """``xs`` moved as little as may be to lie in [low, high], in their order, at least
    ``gap`` apart (less when there is no room)."""
    if len(xs) > 1:
        gap = min(gap, (high - low) / (len(xs) - 1))
    xs = [min(max(x, low), high) for x in xs]
    for i in range(1, len(xs)):
        xs[i] = max(xs[i], xs[i - 1] + gap)
    if xs and xs[-1] > high:
        xs[-1] = high
        for i in range(len(xs) - 2, -1, -1):
            xs[i] = min(xs[i], xs[i + 1] - gap)
    return xs


def _curve(points: list[tuple[float, float]]) -> str:
    """A smooth path through ``points``, vertical where it passes each one."""
    (x, y), *rest = points
    parts = [f"M {_n(x)} {_n(y)}"]
    for x2, y2 in rest:
        bend = (y2 - y) / 2
        parts.append(f"C {_n(x)} {_n(y + bend)} {_n(x2)} {_n(y2 - bend)} {_n(x2)} {_n(y2)}")
        x, y = x2, y2
    return " ".join(parts)


def _reach(text: Text) -> float:
    """How far a self-loop passes from the middle of its label (unlabelled, still round)."""
    return max(text.width, 16) / 2 + LOOP_GAP


def _loop(ends: list[tuple[float, float]], label: _Label) -> str:
    """A step's edge back to itself: down from its bottom, round the label under it
    (through the label's sides and below it) and up into the step again."""
    (out_x, top), (back_x, _) = ends
    view, text = label.vertex.view, label.text
    middle, under = text.y, view.xy[1] + view.h / 2 - 2
    left, right = text.x - _reach(text), text.x + _reach(text)
    drop = max(4.0, (middle - top) / 2)
    curl = (under - middle) * 0.55
    return (
        f"M {_n(out_x)} {_n(top)} "
        f"C {_n(out_x)} {_n(top + drop)} {_n(left)} {_n(middle - drop)} {_n(left)} {_n(middle)} "
        f"C {_n(left)} {_n(middle + curl)} {_n(text.x - curl)} {_n(under)} "
        f"{_n(text.x)} {_n(under)} "
        f"C {_n(text.x + curl)} {_n(under)} {_n(right)} {_n(middle + curl)} "
        f"{_n(right)} {_n(middle)} "
        f"C {_n(right)} {_n(middle - drop)} {_n(back_x)} {_n(top + drop)} {_n(back_x)} {_n(top)}"
    )


#: (kind, what the legend calls it) for steps and for edges, in the legend's order.
STEP_KINDS = (
    ("manual", "Manual step"),
    ("automatic", "Automatic step"),
    ("wait", "Waiting step"),
    ("terminal", "Final step"),
)
EDGE_KINDS = (
    ("transition", "Transition"),
    ("success", "On success"),
    ("error", "On error"),
    ("timeout", "Timeout"),
)
_SAMPLE_W, _SAMPLE_H, _ROW, _PAD = 34, 16, 22, 8


def _legend_rows(step_kinds: set[str], edge_kinds: set[str], current: bool) -> list[tuple]:
    """(step or edge, kind, caption) for the kinds this workflow has."""
    rows = [("step", k, t) for k, t in STEP_KINDS if k in step_kinds]
    if current:
        rows.append(("step", "current", "Current step"))
    return rows + [("edge", k, t) for k, t in EDGE_KINDS if k in edge_kinds]


def _legend_cells(rows: list[tuple], room: float | None) -> list[tuple]:
    """(x, y, row) of each row from the legend's top left corner: one under the other,
    or side by side in lines at most ``room`` wide."""
    cells, x, y = [], _PAD, _PAD
    for row in rows:
        wide = _SAMPLE_W + _PAD + text_width(row[2], EDGE_FONT)
        if room is not None and x > _PAD and x + wide + _PAD > room:
            x, y = _PAD, y + _ROW
        cells.append((x, y, row))
        if room is None:
            y += _ROW
        else:
            x += wide + 2 * _PAD
    return cells


def _extent(cells: list[tuple]) -> tuple[float, float]:
    """The legend's width and height."""
    right = max(
        (x + _SAMPLE_W + _PAD + text_width(r[2], EDGE_FONT) for x, _, r in cells), default=0
    )
    bottom = max((y for _, y, _ in cells), default=0) + (_ROW if cells else 0)
    return right + _PAD, bottom + _PAD


def _legend(cells: list[tuple], left: float, top: float) -> tuple[list[str], list[Text]]:
    """The legend's parts with its top left corner at (left, top), and its texts."""
    width, height = _extent(cells)
    parts = [
        '<g class="legend">',
        f'<rect class="frame" x="{_n(left)}" y="{_n(top)}" width="{_n(width)}" '
        f'height="{_n(height)}" rx="4"/>',
    ]
    texts = []
    for cell_x, cell_y, (what, kind, caption) in cells:
        x, y = left + cell_x, top + cell_y + _ROW / 2
        if what == "step":
            box = Box(x + _SAMPLE_W / 2, y, _SAMPLE_W, _SAMPLE_H)
            parts.append(f'<g class="sample {kind}">{_shape(kind, box)}</g>')
        else:
            parts.append(
                f'<g class="sample-edge {kind}"><path d="M {_n(x)} {_n(y)} h {_SAMPLE_W}" '
                f'marker-end="url(#workflow-arrow-{kind})"/></g>'
            )
        text = Text((caption,), EDGE_FONT)
        text.x, text.y = x + _SAMPLE_W + _PAD + text.width / 2, y
        texts.append(text)
        parts.append(text.svg())
    parts.append("</g>")
    return parts, texts


def _shape(kind: str, box: Box) -> str:
    """A step's box: rounded for a person, squarer for the machine, a double-edged
    pill for a final step."""
    shape = (
        f'<rect x="{_n(box.left)}" y="{_n(box.top)}" width="{_n(box.w)}" '
        f'height="{_n(box.h)}" rx="{_radius(kind, box.h)}"/>'
    )
    if kind == "terminal":
        shape += (
            f'<rect class="inner" x="{_n(box.left + 3)}" y="{_n(box.top + 3)}" '
            f'width="{_n(box.w - 6)}" height="{_n(box.h - 6)}" '
            f'rx="{_radius(kind, box.h - 6)}"/>'
        )
    return shape


def _radius(kind: str, height: float) -> str:
    return _n({"automatic": 2, "terminal": height / 2}.get(kind, 7))


def _n(number: float) -> str:
    """A coordinate, short: at most one decimal."""
    text = f"{number:.1f}"
    return text[:-2] if text.endswith(".0") else text


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
        parts.append(
            f'<g class="edge {edge.kind}" data-source="{escape(edge.source)}" '
            f'data-target="{escape(edge.target)}"><path d="{arrow.path}" '
            f'marker-end="url(#workflow-arrow-{edge.kind})"/>{label}</g>'
        )
    for node in diagram.nodes:
        classes = " ".join(c for c in ("step", node.kind, "current" if node.current else "") if c)
        shape = _shape(node.kind, node.box)
        parts.append(
            f'<g class="{classes}" data-step="{escape(node.name)}">'
            f"<title>{escape(node.name)} ({node.kind})</title>{shape}{node.text.svg()}</g>"
        )
    parts += diagram.legend
    parts.append("</svg>")
    return "".join(parts)
