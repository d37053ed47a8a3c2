"""Count matrices as heatmaps: grade x judgment (``rubric verify agreement --plot``) and the
automatic x manual nugget assignment confusion matrix ("The Great Nugget Recall", Figure 6).

Each panel colours its cells by their count and writes the cell's text in it (the count, or
"percent (count)"); several panels (several prompt classes) sit side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rubric.plots import new_figure, plot_format, render, style, write_bytes

if TYPE_CHECKING:
    from rubric.evaluate.assignment_agreement import AssignmentConfusion

PANEL_WIDTH = 4.5
PANEL_HEIGHT = 4.0


@dataclass
class CountMatrix:
    """One panel: rows x columns of counts, the text shown in each cell, and the axis names."""

    title: str
    row_labels: list[str]
    col_labels: list[str]
    counts: list[list[int]]
    row_title: str
    col_title: str
    cells: list[list[str]] | None = None  # default: the counts

    def text(self, i: int, j: int) -> str:
        return self.cells[i][j] if self.cells is not None else str(self.counts[i][j])


def figure_pixels(panels: list[CountMatrix]) -> tuple[int, int]:
    from rubric.plots import DPI

    return round(len(panels) * PANEL_WIDTH * DPI), round(PANEL_HEIGHT * DPI)


def count_heatmaps(panels: list[CountMatrix], path: str | Path) -> None:
    """Draw the panels side by side into ``path`` (.png, .svg or .pdf)."""
    fmt = plot_format(path)
    with style():
        fig = new_figure(len(panels) * PANEL_WIDTH, PANEL_HEIGHT)
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        for ax, panel in zip(axes, panels, strict=True):
            _panel(fig, ax, panel)
        data = render(fig, fmt)
    write_bytes(path, data)


def _panel(fig, ax, panel: CountMatrix) -> None:
    counts = panel.counts
    top = max((c for row in counts for c in row), default=0) or 1
    image = ax.imshow(counts, cmap="Blues", vmin=0, vmax=top, aspect="auto")
    for i, row in enumerate(counts):
        for j, c in enumerate(row):
            dark = c > 0.55 * top
            ax.text(
                j,
                i,
                panel.text(i, j),
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
            )
    ax.set_xticks(range(len(panel.col_labels)), [c.replace("_", "\n") for c in panel.col_labels])
    ax.set_yticks(range(len(panel.row_labels)), panel.row_labels)
    ax.set_xlabel(panel.col_title)
    ax.set_ylabel(panel.row_title)
    ax.set_title(panel.title)
    ax.tick_params(length=0)
    fig.colorbar(image, ax=ax, shrink=0.8, label="count")


def assignment_heatmap(result: AssignmentConfusion, path: str | Path) -> None:
    """The automatic x manual nugget assignment matrix (`evaluate meta --confusion`) as a heatmap."""
    from rubric.evaluate.assignment_agreement import LABELS

    panel = CountMatrix(
        title="nugget assignment",
        row_labels=list(LABELS),
        col_labels=list(LABELS),
        counts=result.matrix(),
        row_title=result.first,
        col_title=result.second,
        cells=[[result.cell_text(a, b) for b in LABELS] for a in LABELS],
    )
    count_heatmaps([panel], path)
