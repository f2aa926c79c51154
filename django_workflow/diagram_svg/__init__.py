"""The admin's SVG of a workflow: text measured, laid out, routed and drawn.

It receives the workflow's steps and its edges (``graph.edges``) and knows
nothing else of the workflow; ``graph.svg`` and ``graph.layout`` call it. The
drawing is inline SVG, no JavaScript, no network.

The rooms, each using only those before it: ``primitives`` (text widths and
wrapping, boxes, step shapes), ``placing`` (grandalf's layered layout of the
steps and of a vertex per edge label), ``routing`` (the lines between them),
``legend``, and ``drawing`` (the whole diagram and its SVG).
"""

from .drawing import Diagram, layout, svg
from .legend import EDGE_KINDS, LEGEND_BESIDE_UP_TO, STEP_KINDS
from .placing import Node
from .primitives import (
    CONDITION_CHARS,
    LINE_HEIGHT,
    Box,
    Text,
    _n,
    shorten,
    text_width,
    wrap,
)
from .routing import Arrow

__all__ = [
    "CONDITION_CHARS",
    "EDGE_KINDS",
    "LEGEND_BESIDE_UP_TO",
    "LINE_HEIGHT",
    "STEP_KINDS",
    "Arrow",
    "Box",
    "Diagram",
    "Node",
    "Text",
    "_n",  # coordinates written short; graph.py hands it on to the diagram's tests
    "layout",
    "shorten",
    "svg",
    "text_width",
    "wrap",
]
