"""The diagram's legend: a sample and a caption for each kind of step and edge the
workflow has, beside the diagram when it fits the admin's panel, else below it."""

from __future__ import annotations

from .placing import MARGIN, X_SPACE
from .primitives import EDGE_FONT, Box, Text, _n, step_shape, text_width

#: Beyond this width the legend goes below the diagram instead of beside it (the
#: admin's panel is some 860 px wide in a 1280 px window with the navigation bar).
LEGEND_BESIDE_UP_TO = 860
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
    ("join", "Join"),
)
_SAMPLE_W, _SAMPLE_H, _ROW, _PAD = 34, 16, 22, 8


def legend_rows(step_kinds: set[str], edge_kinds: set[str], current: bool) -> list[tuple]:
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
            parts.append(f'<g class="sample {kind}">{step_shape(kind, box)}</g>')
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


def place_legend(
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
