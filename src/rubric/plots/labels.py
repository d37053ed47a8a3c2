"""Point labels that overlap nothing: each label goes to the nearest free place around its point.

Run names piled up next to their points turn a crowded scatter into an unreadable block, so
every label is placed in turn at the first candidate position (rings of growing radius around
its point, 16 directions each) where its box stays inside the axes and overlaps no label placed
before it and no marker; a label away from its point gets a thin leader line. The boxes are the
rendered text extents (a renderer of the laid-out figure), so what is tested is what is drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

RADII = (3, 6, 10, 15, 21, 28, 36, 45, 56, 70, 86, 104)
"""Distances (points) from a point to its label that are tried, nearest first."""
DIRECTIONS = 16
LEADER_FROM = 8
"""A label this far (points) or further from its point gets a leader line."""


@dataclass(frozen=True)
class Box:
    """A rectangle in display pixels."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def inside(self, outer: Box) -> bool:
        return self.x0 >= outer.x0 and self.y0 >= outer.y0 and self.x1 <= outer.x1 and self.y1 <= outer.y1


def _align(dx: float, dy: float) -> tuple[str, str]:
    ha = "left" if dx > 0.3 else "right" if dx < -0.3 else "center"
    va = "bottom" if dy > 0.3 else "top" if dy < -0.3 else "center"
    return ha, va


def _box(px: float, py: float, w: float, h: float, *, ha: str, va: str) -> Box:
    x0 = px if ha == "left" else px - w if ha == "right" else px - w / 2
    y0 = py if va == "bottom" else py - h if va == "top" else py - h / 2
    return Box(x0, y0, x0 + w, y0 + h)


def place_labels(
    ax, points: list[tuple[float, float]], texts: list[str], fontsize: float, marker_pt: float
) -> bool:
    """Annotate each point (data coordinates) with its text where it overlaps nothing; False (and
    nothing drawn) when some label finds no free place. The figure must be laid out already."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    inner = Box(frame.x0 + 1, frame.y0 + 1, frame.x1 - 1, frame.y1 - 1)
    px_per_pt = fig.dpi / 72
    anchors = [tuple(p) for p in ax.transData.transform(points)]
    r = marker_pt / 2 * px_per_pt
    markers = [Box(x - r, y - r, x + r, y + r) for x, y in anchors]
    sizes = []
    for text in texts:
        probe = ax.text(0, 0, text, fontsize=fontsize)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        sizes.append((extent.width + 2, extent.height + 1))
    # the most crowded points first: they have the fewest free places
    crowd = [sum(math.dist(a, b) < 40 * px_per_pt for b in anchors) for a in anchors]
    order = sorted(range(len(points)), key=lambda i: (-crowd[i], i))
    placed: list[Box] = []
    chosen: dict[int, tuple[float, float, str, str]] = {}
    for i in order:
        spot = _free_spot(
            anchors[i], sizes[i], r / px_per_pt, px_per_pt, inner=inner, placed=placed, markers=markers
        )
        if spot is None:
            return False
        dx, dy, ha, va, box = spot
        placed.append(box)
        chosen[i] = (dx, dy, ha, va)
    for i, (dx, dy, ha, va) in chosen.items():
        far = math.hypot(dx, dy) >= LEADER_FROM + r / px_per_pt
        ax.annotate(
            texts[i],
            points[i],
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=fontsize,
            zorder=6,
            gid=f"label-{i}",
            bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none", "alpha": 0.75},
            arrowprops={
                "arrowstyle": "-",
                "color": "0.45",
                "linewidth": 0.5,
                "shrinkA": 0,
                "shrinkB": r / px_per_pt,
            }
            if far
            else None,
            annotation_clip=False,
        ).set_in_layout(False)
    return True


def _free_spot(anchor, size, r_pt, px_per_pt, *, inner, placed, markers):
    """The first (dx, dy, ha, va, box) around ``anchor`` that overlaps nothing, or None."""
    w, h = size
    for radius in RADII:
        dist = radius + r_pt
        for k in range(DIRECTIONS):
            angle = math.pi / 4 + 2 * math.pi * k / DIRECTIONS  # upper right first
            ux, uy = math.cos(angle), math.sin(angle)
            ha, va = _align(ux, uy)
            dx, dy = dist * ux, dist * uy
            box = _box(anchor[0] + dx * px_per_pt, anchor[1] + dy * px_per_pt, w, h, ha=ha, va=va)
            if (
                box.inside(inner)
                and not any(box.overlaps(b) for b in placed)
                and not any(box.overlaps(m) for m in markers)
            ):
                return dx, dy, ha, va, box
    return None


def label_boxes(ax) -> list[Box]:
    """The rendered boxes of the labels :func:`place_labels` drew (for tests and checks)."""
    from matplotlib.text import Text

    renderer = ax.figure.canvas.get_renderer()
    out = []
    for child in ax.texts:
        gid = child.get_gid() or ""
        if gid.startswith("label-"):
            e = Text.get_window_extent(child, renderer)  # the text itself, without its leader line
            out.append(Box(e.x0, e.y0, e.x1, e.y1))
    return out
