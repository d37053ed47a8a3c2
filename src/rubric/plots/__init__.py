"""Figures of the papers, drawn with matplotlib (the optional ``plot`` extra).

* :func:`rubric.plots.scatter.meta_scatter`: "The Great Nugget Recall" Figure 4: one evaluation
  against another, run-level points large, topic/run points small, the three taus in a box;
* :func:`rubric.plots.heatmap.count_heatmaps`: labelled count matrices (grade x judgment of
  ``rubric verify agreement``, the nugget assignment confusion matrix of Figure 6);
* :func:`rubric.plots.figures.meta_figure`: the figure of a ``rubric evaluate meta`` result.

matplotlib is imported only when a figure is drawn, through the object-oriented API (no pyplot,
no global backend switch), so importing this package costs nothing and a user's interactive
session is left alone. Output is reproducible: fixed font (DejaVu Sans, shipped with
matplotlib), text as paths in SVG, a fixed SVG hash salt, and no dates or versions in metadata,
so the same input gives the same bytes. Files are written atomically.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.extras import load

FORMATS = ("png", "svg", "pdf")
DPI = 100

#: rcParams that make the output depend on the data only.
STYLE = {
    "svg.hashsalt": "rubric-workbench",
    "svg.fonttype": "path",
    "pdf.fonttype": 42,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "path.simplify": False,
}
#: Metadata per format with everything that varies between runs (dates, versions) removed.
METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": "rubric-workbench"},
    "pdf": {"CreationDate": None, "ModDate": None, "Creator": "rubric-workbench", "Producer": None},
}


def require_matplotlib():
    """The matplotlib module, or a one-line error telling how to install it."""
    return load("plot", "matplotlib", "{plot}")


def plot_format(path: str | Path) -> str:
    """The figure format from the file name's suffix (checked before any work is done)."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise UserError(f"{{plot}}: {path}: the file name must end in .png, .svg or .pdf", "plot")
    return fmt


def check_plot(path: str | Path | None) -> str | None:
    """The figure format of ``--plot PATH`` (None without ``--plot``), once matplotlib is known to
    be installed: a command calls it before it reads any file, so a bad suffix or a missing extra
    costs no work."""
    if path is None:
        return None
    fmt = plot_format(path)
    require_matplotlib()
    return fmt


def parse_limits(option: str, value: str | None) -> tuple[float, float] | None:
    """``LO,HI`` (an axis range to fix) as two numbers, LO < HI; None stays None (from the data)."""
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value.split(","))
    except ValueError:
        raise UserError(f"{option}: expected LO,HI such as 0,1, got {value!r}") from None
    if not low < high:
        raise UserError(f"{option}: expected LO < HI, got {value!r}")
    return low, high


@contextmanager
def style() -> Iterator[None]:
    """Reproducible rcParams for the duration of one figure."""
    matplotlib = require_matplotlib()
    with matplotlib.rc_context(STYLE):
        yield


def new_figure(width_in: float, height_in: float, dpi: int = DPI):
    """A figure of exactly this size (pixels = inches x dpi), with constrained layout."""
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width_in, height_in), dpi=dpi, layout="constrained")


def render(fig, fmt: str, dpi: int = DPI) -> bytes:
    """The figure as PNG, SVG or PDF bytes (the size the figure was made with)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)  # attaches itself; savefig picks the right backend per format
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, metadata=METADATA[fmt])
    return buf.getvalue()


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` by the output rule of every file (:mod:`rubric.data.files`): all
    at once or not at all, a link followed, a failure one error naming the path and the reason."""
    from rubric.data.files import write_output_bytes

    write_output_bytes(path, data)


def svg_titles(svg: bytes, titles: dict[str, str]) -> bytes:
    """Give the SVG groups with these ids a ``<title>`` child: browsers show it on hover."""
    from html import escape

    text = svg.decode("utf-8")
    for gid, title in titles.items():
        opening = f'<g id="{escape(gid)}">'
        if opening not in text:
            raise AssertionError(f"no SVG group {gid!r} to title")  # a drawing bug, not user input
        text = text.replace(opening, f"{opening}\n   <title>{escape(title)}</title>", 1)
    return text.encode("utf-8")
