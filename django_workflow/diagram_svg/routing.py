"""The diagram's lines: each edge from where the layout left its vertices, its ends
spread along the sides they meet so that lines leaving one side do not cross, drawn
as smooth curves; a step's edge back to itself curls round its label."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .placing import PORT_GAP, Chain, Label, Layered, View, loop_reach
from .primitives import Text, _n


@dataclass
class Arrow:
    """One edge of the workflow as drawn: its path and, on the first edge sharing a
    label vertex, the label."""

    edge: Any  # a graph.Edge
    path: str
    label: Text | None = None


def route_chains(graph: Layered) -> list[list[list[tuple[float, float]]]]:
    """Per chain, its lines' points, their ends spread along the sides they meet."""
    ports = _Ports()
    routes: list[list[list[tuple[float, float]]]] = []
    for edge, label, chain in graph.chains:
        if label is not None and label.loop:
            node, around = graph.vertices[edge.source].view, label.vertex.view
            ends = [(node.xy[0], node.xy[1]), (node.xy[0], node.xy[1])]
            reach = loop_reach(label.text)
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


def draw_arrows(chains: list[Chain], routes: list[list[list[tuple[float, float]]]]) -> list[Arrow]:
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


class _Ports:
    """Where lines meet the top and bottom sides of the vertices: each line at the
    point it aims for, spread apart when several meet one side."""

    def __init__(self) -> None:
        self.sides: dict[tuple[int, bool], tuple[View, list[tuple]]] = {}

    def add(
        self,
        view: View,
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


def _aim(view: View, towards: tuple[float, float]) -> float:
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


def _loop(ends: list[tuple[float, float]], label: Label) -> str:
    """A step's edge back to itself: down from its bottom, round the label under it
    (through the label's sides and below it) and up into the step again."""
    (out_x, top), (back_x, _) = ends
    view, text = label.vertex.view, label.text
    middle, under = text.y, view.xy[1] + view.h / 2 - 2
    left, right = text.x - loop_reach(text), text.x + loop_reach(text)
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
