"""The drawing's primitives: text measured and wrapped, boxes, the steps' shapes, and
coordinates written short.

Text widths are estimated from the characters, generously (calibrated on DejaVu Sans,
wider than the usual admin fonts): the layout spaces what it cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

#: Font sizes (px) of a step's name and of an edge's label, and the line height factor.
NODE_FONT, EDGE_FONT, LINE_HEIGHT = 12, 11, 1.3

#: The most characters of a route's condition an edge's label shows; a longer one is cut
#: short with an ellipsis, its whole text in the edge's ``<title>`` (two lines of a label).
CONDITION_CHARS = 40

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


def shorten(text: str, limit: int = CONDITION_CHARS) -> str:
    """``text`` whole when it has at most ``limit`` characters; else cut to fit with "…",
    between words when a space leaves at least half of it."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


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
        # the first line's middle rounded as written, the others a whole line height
        # below it: lines rounded one by one could come a tenth of a pixel too close
        first = round(self.y - self.height / 2 + self.line_height / 2, 1)
        spans = "".join(
            f'<tspan x="{_n(self.x)}" y="{_n(first + i * self.line_height)}">{escape(line)}</tspan>'
            for i, line in enumerate(self.lines)
        )
        cls = f' class="{css_class}"' if css_class else ""
        return (
            f'<text{cls} font-size="{_n(self.size)}" text-anchor="middle" '
            f'dominant-baseline="central">{spans}</text>'
        )


def step_shape(kind: str, box: Box) -> str:
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
