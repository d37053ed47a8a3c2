"""Figure 4 of "The Great Nugget Recall": an evaluation against a reference, run by run.

One panel per (condition, measure) of a meta-evaluation (rows: conditions, columns: measures,
as in the paper; conditions with different measures: the panels in order, 3 per line). The x
axis is the evaluation, the y axis the reference. Large red circles are runs (their mean
scores), small blue dots every topic/run pair; the box in the lower right gives
Kendall's tau at the run level, over all topic/run pairs and as the average of per-topic taus.
In SVG each run's circle carries the run name as a ``<title>`` (shown on hover); ``label_runs``
also writes the names next to the circles. A reference of official ranks is drawn rank 1 on top.
"""

from __future__ import annotations

from pathlib import Path

from rubric.evaluate.meta import MetaRow
from rubric.plots import new_figure, plot_format, render, style, svg_titles, write_bytes

PANEL_INCHES = 4.0
RUN_COLOUR = "#d62728"
PAIR_COLOUR = "#1f77b4"


def run_gid(panel: int, index: int) -> str:
    return f"run-{panel}-{index}"


def pairs_gid(panel: int) -> str:
    return f"pairs-{panel}"


def layout(rows: list[MetaRow]) -> tuple[int, int, list[tuple[int, int]]]:
    """Rows and columns of panels and each row's place: conditions x measures as in the paper
    when every condition has every measure, else the panels in order, at most 3 per line."""
    conditions = list(dict.fromkeys(r.condition for r in rows))
    measures = list(dict.fromkeys(r.measure for r in rows))
    if len(rows) == len(conditions) * len(measures):
        places = [(conditions.index(r.condition), measures.index(r.measure)) for r in rows]
        return len(conditions), len(measures), places
    ncols = min(3, len(rows))
    return -(-len(rows) // ncols), ncols, [divmod(k, ncols) for k in range(len(rows))]


def figure_pixels(rows: list[MetaRow]) -> tuple[int, int]:
    """Width and height of the figure in pixels."""
    from rubric.plots import DPI

    nrows, ncols, _ = layout(rows)
    return round(ncols * PANEL_INCHES * DPI), round(nrows * PANEL_INCHES * DPI)


def _fmt(value: float) -> str:
    return "n/a" if value != value else f"{value:.3f}"


def meta_scatter(rows: list[MetaRow], path: str | Path, reference: str, *, label_runs: bool = False) -> None:
    """Draw the scatter plots of these rows into ``path`` (.png, .svg or .pdf)."""
    fmt = plot_format(path)
    nrows, ncols, places = layout(rows)
    titles: dict[str, str] = {}
    with style():
        fig = new_figure(ncols * PANEL_INCHES, nrows * PANEL_INCHES)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for k, (row, (i, j)) in enumerate(zip(rows, places, strict=True)):
            titles.update(_panel(axes[i][j], k, row, reference=reference, label_runs=label_runs))
        for ax in axes.flat[len(rows) :] if len(places) < nrows * ncols else []:
            ax.set_axis_off()  # the unused places of the last line
        data = render(fig, fmt)
    if fmt == "svg":
        data = svg_titles(data, titles)
    write_bytes(path, data)


def _panel(ax, k: int, row: MetaRow, *, reference: str, label_runs: bool) -> dict[str, str]:
    paired = row.paired
    assert paired is not None, "meta_scatter needs rows that keep their values"
    titles: dict[str, str] = {}
    if paired.y:
        pairs = paired.pairs
        ax.scatter(
            [paired.x[r][t] for r, t in pairs],
            [paired.y[r][t] for r, t in pairs],
            s=12,
            c=PAIR_COLOUR,
            alpha=0.5,
            linewidths=0,
            label="topic/run",
            gid=pairs_gid(k),
            zorder=2,
        )
    for i, run in enumerate(paired.runs):
        x, y = paired.x_runs[run], paired.y_runs[run]
        ax.scatter(
            [x], [y], s=55, c=RUN_COLOUR, edgecolors="black", linewidths=0.6, gid=run_gid(k, i), zorder=3
        )
        titles[run_gid(k, i)] = f"{run}: {x:.4f}, {y:.4g}"
        if label_runs:
            ax.annotate(run, (x, y), xytext=(4, 3), textcoords="offset points", fontsize=6.5, zorder=4)
    ax.scatter([], [], s=55, c=RUN_COLOUR, edgecolors="black", linewidths=0.6, label="run")
    box = [f"run-level τ = {_fmt(row.tau_run)}"]
    if paired.y:
        box += [f"all topics/runs τ = {_fmt(row.tau_pairs)}", f"per-topic avg τ = {_fmt(row.tau_topic_avg)}"]
    ax.text(
        0.97,
        0.03,
        "\n".join(box),
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
        bbox={"boxstyle": "round,pad=0.35", "facecolor": "white", "edgecolor": "0.6"},
        zorder=5,
    )
    ax.set_xlabel(f"{row.condition}: {row.measure}")
    if paired.y_are_ranks:
        ax.set_ylabel(f"{reference}: rank")
        ax.invert_yaxis()
    else:
        ax.set_ylabel(f"{reference}: {row.reference_measure}")
        _unit_limits(
            ax, [v for r in paired.y.values() for v in r.values()] + list(paired.y_runs.values()), "y"
        )
    _unit_limits(ax, [v for r in paired.x.values() for v in r.values()] + list(paired.x_runs.values()), "x")
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    ax.grid(True, linewidth=0.3, alpha=0.5)
    return titles


def _unit_limits(ax, values: list[float], axis: str) -> None:
    """Scores in [0, 1] (most IR measures) get the whole unit range, as in the paper."""
    if values and min(values) >= 0 and max(values) <= 1:
        (ax.set_xlim if axis == "x" else ax.set_ylim)(-0.03, 1.03)
