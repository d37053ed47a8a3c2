"""The figure of each result of ``rubric evaluate meta``: the scatter of a meta-evaluation
(:func:`~rubric.plots.scatter.meta_scatter`) or the heatmap of an assignment confusion matrix
(:func:`~rubric.plots.heatmap.assignment_heatmap`), so the command draws whichever it got."""

from __future__ import annotations

from pathlib import Path

from rubric.evaluate.assignment_agreement import AssignmentConfusion
from rubric.evaluate.meta import MetaReport
from rubric.plots.heatmap import assignment_heatmap
from rubric.plots.scatter import ScatterStyle, meta_scatter


def meta_figure(
    result: MetaReport | AssignmentConfusion,
    path: str | Path,
    *,
    label_runs: bool = False,
    look: ScatterStyle | None = None,
    by_row: bool = False,
) -> None:
    """Draw ``result`` to ``path`` (.png, .svg or .pdf); ``label_runs`` names the runs' points of
    a scatter, ``look`` sets its limits, size and resolution; ``by_row`` row-normalises a heatmap."""
    look = look or ScatterStyle(label_runs=label_runs)
    if isinstance(result, MetaReport):
        meta_scatter(result.rows, path, result.reference, look=look)
    else:
        assignment_heatmap(result, path, by_row=by_row, dpi=look.dpi)
