"""Count matrices as heatmaps: grade x judgment (``rubric verify agreement --plot``) and the
automatic x manual nugget assignment confusion matrix ("The Great Nugget Recall", Figure 6).

Each panel writes the cell's text in it (the count, or "percent (count)") and colours the cell
by its count or, row-normalised, by its share of the row: raw counts let the largest column
(most judged passages are not relevant) wash out every other cell, while row shares show where
each grade's passages go. Panels side by side share their categories, so they compare cell by
cell; the title names what is compared and carries its kappa.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rubric.plots import DPI, new_figure, plot_format, render, style, write_bytes

if TYPE_CHECKING:
    from rubric.evaluate.assignment_agreement import AssignmentConfusion

PANEL_WIDTH = 4.5
PANEL_HEIGHT = 4.0
TITLE_CHARS = 48  # characters of a title line that fit over one panel


@dataclass
class CountMatrix:
    """One panel: rows x columns of counts, the text shown in each cell, and the axis names."""

    title: str
    row_labels: list[str]
    col_labels: list[str]
    counts: list[list[int]]
    row_title: str
    col_title: str
    cells: list[list[str]] | None = None  # default: the counts, or "percent (count)" by rows

    def text(self, i: int, j: int, *, by_row: bool = False) -> str:
        if self.cells is not None:
            return self.cells[i][j]
        if by_row:
            total = sum(self.counts[i])
            share = self.counts[i][j] / total if total else 0.0
            return f"{100 * share:.0f}%\n({self.counts[i][j]})"
        return str(self.counts[i][j])

    def shares(self) -> list[list[float]]:
        """Each cell's share of its row (0 for an empty row)."""
        return [[c / sum(row) if sum(row) else 0.0 for c in row] for row in self.counts]


def figure_pixels(panels: list[CountMatrix], dpi: int = DPI) -> tuple[int, int]:
    return round(len(panels) * PANEL_WIDTH * dpi), round(PANEL_HEIGHT * dpi)


def count_heatmaps(
    panels: list[CountMatrix], path: str | Path, *, by_row: bool = False, dpi: int = DPI
) -> None:
    """Draw the panels side by side into ``path`` (.png, .svg or .pdf); ``by_row`` colours each
    cell by its share of the row."""
    fmt = plot_format(path)
    with style():
        fig = new_figure(len(panels) * PANEL_WIDTH, PANEL_HEIGHT, dpi)
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        top = max((c for p in panels for row in p.counts for c in row), default=0) or 1
        for ax, panel in zip(axes, panels, strict=True):
            _panel(fig, ax, panel, by_row=by_row, top=top)
        data = render(fig, fmt, dpi)
    write_bytes(path, data)


def _panel(fig, ax, panel: CountMatrix, *, by_row: bool, top: int) -> None:
    values: Sequence[Sequence[float]] = panel.shares() if by_row else panel.counts
    vmax = 1.0 if by_row else top  # one colour scale for every panel
    image = ax.imshow(values, cmap="Blues", vmin=0, vmax=vmax, aspect="auto")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            ax.text(
                j,
                i,
                panel.text(i, j, by_row=by_row),
                ha="center",
                va="center",
                fontsize=7.5 if by_row else 8,
                color="white" if v > 0.55 * vmax else "black",
            )
    ax.set_xticks(range(len(panel.col_labels)), [textwrap.fill(c, 10) for c in panel.col_labels])
    ax.set_yticks(range(len(panel.row_labels)), panel.row_labels)
    ax.set_xlabel(textwrap.fill(panel.col_title, TITLE_CHARS))
    ax.set_ylabel(textwrap.fill(panel.row_title, TITLE_CHARS - 10))
    # long prompt class and file names wrap instead of running off the figure
    ax.set_title("\n".join(textwrap.fill(line, TITLE_CHARS) for line in panel.title.split("\n")), fontsize=9)
    ax.tick_params(length=0)
    fig.colorbar(image, ax=ax, shrink=0.8, label="share of the row" if by_row else "count")


def human_label(label: str) -> str:
    """``partial_support`` -> ``partial support``: one spelling on both axes and in the text."""
    return label.replace("_", " ")


def assignment_panel(result: AssignmentConfusion, *, by_row: bool = False) -> CountMatrix:
    """The automatic x manual nugget assignment matrix as a panel: both axes named for what
    they are, the labels spelled alike on both, agreement and kappa in the title."""
    from rubric.evaluate.assignment_agreement import LABELS

    return CountMatrix(
        title=f"nugget assignment: {result.first} vs {result.second}\n"
        f"agreement {result.agreement:.3f}, Cohen's κ = {result.kappa:.3f}",
        row_labels=[human_label(lab) for lab in LABELS],
        col_labels=[human_label(lab) for lab in LABELS],
        counts=result.matrix(),
        row_title=f"automatic ({result.first})",
        col_title=f"manual ({result.second})",
        cells=None if by_row else [[result.cell_text(a, b) for b in LABELS] for a in LABELS],
    )


def assignment_heatmap(
    result: AssignmentConfusion, path: str | Path, *, by_row: bool = False, dpi: int = DPI
) -> None:
    """The automatic x manual nugget assignment matrix (`evaluate meta --confusion`) as a heatmap."""
    count_heatmaps([assignment_panel(result, by_row=by_row)], path, by_row=by_row, dpi=dpi)
