"""Figure 4 of "The Great Nugget Recall": an evaluation against a reference, run by run.

One panel per (condition, measure) of a meta-evaluation (rows: conditions, columns: measures,
as in the paper; conditions with different measures: the panels in order, 3 per line). The x
axis is the evaluation, the y axis the reference. Large red circles are runs (their mean
scores), small blue dots every topic/run pair; each panel's title gives Kendall's tau at the run
level, over all topic/run pairs and as the average of per-topic taus, and the legend sits below
the panels, so neither covers a point. In SVG each run's circle carries the run name as a
``<title>`` (shown on hover). ``label_runs`` writes the names next to the circles where they
overlap nothing (:mod:`rubric.plots.labels`); when some name finds no free place, the runs are
numbered instead and a key beside the panels names them. Axis limits follow the data unless
fixed. A reference of official ranks is drawn rank 1 on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rubric.evaluate.meta import MetaRow
from rubric.plots import DPI, new_figure, plot_format, render, style, svg_titles, write_bytes

PANEL_INCHES = 4.0
RUN_COLOUR = "#d62728"
PAIR_COLOUR = "#1f77b4"
RUN_MARKER = 55  # points squared, as scatter's s
LABEL_SIZE = 6.5


@dataclass(frozen=True)
class ScatterStyle:
    """How the figure looks: run labels, fixed axis limits (None: from the data), panel size in
    inches and resolution (dots per inch, for PNG)."""

    label_runs: bool = False
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    panel_inches: float = PANEL_INCHES
    dpi: int = DPI


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


def figure_pixels(rows: list[MetaRow], look: ScatterStyle = ScatterStyle()) -> tuple[int, int]:
    """Width and height of the figure in pixels (before a key of numbered runs widens it)."""
    nrows, ncols, _ = layout(rows)
    return round(ncols * look.panel_inches * look.dpi), round(nrows * look.panel_inches * look.dpi)


def _fmt(value: float) -> str:
    return "n/a" if value != value else f"{value:.3f}"


def meta_scatter(
    rows: list[MetaRow],
    path: str | Path,
    reference: str,
    *,
    label_runs: bool = False,
    look: ScatterStyle | None = None,
) -> None:
    """Draw the scatter plots of these rows into ``path`` (.png, .svg or .pdf)."""
    fmt = plot_format(path)
    look = look or ScatterStyle(label_runs=label_runs)
    with style():
        fig, titles = scatter_figure(rows, reference, look)
        data = render(fig, fmt, look.dpi)
    if fmt == "svg":
        data = svg_titles(data, titles)
    write_bytes(path, data)


def scatter_figure(rows: list[MetaRow], reference: str, look: ScatterStyle = ScatterStyle()):
    """The figure (laid out, labels placed) and the SVG titles of its run circles."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.lines import Line2D

    nrows, ncols, places = layout(rows)
    titles: dict[str, str] = {}
    fig = new_figure(ncols * look.panel_inches, nrows * look.panel_inches, look.dpi)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    panels = []
    for k, (row, (i, j)) in enumerate(zip(rows, places, strict=True)):
        titles.update(_panel(axes[i][j], k, row, reference, look))
        panels.append((axes[i][j], row))
    for ax in axes.flat[len(rows) :] if len(places) < nrows * ncols else []:
        ax.set_axis_off()  # the unused places of the last line
    handles = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=7,
            markerfacecolor=RUN_COLOUR,
            markeredgecolor="black",
            label="run",
        ),
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=4,
            markerfacecolor=PAIR_COLOUR,
            markeredgewidth=0,
            alpha=0.6,
            label="topic/run",
        ),
    ]
    if any(row.paired and row.paired.y for row in rows):
        fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    else:
        fig.legend(handles=handles[:1], loc="outside lower center", fontsize=8, frameon=False)
    if look.label_runs:
        _label(fig, panels)
    return fig, titles


def _label(fig, panels) -> None:
    """Names next to the run circles; numbers and a key when some name finds no free place."""
    from rubric.plots.labels import place_labels

    def attempt(texts_of) -> bool:
        fig.set_layout_engine("constrained")
        fig.draw_without_rendering()
        fig.set_layout_engine("none")  # frozen: the labels must not move the axes they were fitted to
        for ax, row in panels:
            if not place_labels(ax, _run_points(row), texts_of(row), LABEL_SIZE, RUN_MARKER**0.5):
                for child in [t for t in ax.texts if (t.get_gid() or "").startswith("label-")]:
                    child.remove()
                return False
        return True

    if attempt(lambda row: list(row.paired.runs)):
        return
    for ax, _ in panels:  # drop any names placed in earlier panels
        for child in [t for t in ax.texts if (t.get_gid() or "").startswith("label-")]:
            child.remove()
    runs = list(dict.fromkeys(run for _, row in panels for run in row.paired.runs))
    number = {run: str(n) for n, run in enumerate(runs, start=1)}
    key = _key(fig, runs, number)
    fig.draw_without_rendering()
    width = key.get_window_extent().width / fig.dpi
    fig.set_figwidth(fig.get_figwidth() + width + 0.15)  # the panels keep their size beside the key
    attempt(lambda row: [number[r] for r in row.paired.runs])


def _key(fig, runs: list[str], number: dict[str, str]):
    """The names of the numbered runs, beside the panels."""
    from matplotlib.lines import Line2D

    per_column = max(1, int(fig.get_figheight() * 72 / (LABEL_SIZE * 1.45)) - 3)
    handles = [Line2D([], [], linestyle="none", label=f"{number[r]}  {r}") for r in runs]
    return fig.legend(
        handles=handles,
        loc="outside right upper",
        ncols=-(-len(runs) // per_column),
        fontsize=LABEL_SIZE,
        frameon=False,
        handlelength=0,
        handletextpad=0,
        columnspacing=1.2,
        title="runs",
        title_fontsize=LABEL_SIZE + 1,
    )


def _run_points(row: MetaRow) -> list[tuple[float, float]]:
    paired = row.paired
    assert paired is not None  # meta rows that are plotted keep their values
    return [(paired.x_runs[r], paired.y_runs[r]) for r in paired.runs]


def _panel(ax, k: int, row: MetaRow, reference: str, look: ScatterStyle) -> dict[str, str]:
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
            gid=pairs_gid(k),
            zorder=2,
        )
    for i, run in enumerate(paired.runs):
        x, y = paired.x_runs[run], paired.y_runs[run]
        ax.scatter(
            [x],
            [y],
            s=RUN_MARKER,
            c=RUN_COLOUR,
            edgecolors="black",
            linewidths=0.6,
            gid=run_gid(k, i),
            zorder=3,
        )
        titles[run_gid(k, i)] = f"{run}: {x:.4f}, {y:.4g}"
    taus = [f"run τ = {_fmt(row.tau_run)}"]
    if paired.y:
        taus += [f"topic/run τ = {_fmt(row.tau_pairs)}", f"per-topic τ = {_fmt(row.tau_topic_avg)}"]
    ax.set_title(("   " if look.panel_inches >= 3.5 else "\n").join(taus), fontsize=8)
    ax.set_xlabel(f"{row.condition}: {row.measure}")
    xs = [v for r in paired.x.values() for v in r.values()] + list(paired.x_runs.values())
    ys = [v for r in paired.y.values() for v in r.values()] + list(paired.y_runs.values())
    ax.set_xlim(look.xlim or _limits(xs))
    if paired.y_are_ranks:
        ax.set_ylabel(f"{reference}: rank")
        low, high = look.ylim or _limits(ys)
        ax.set_ylim(high, low)  # rank 1 on top
    else:
        ax.set_ylabel(f"{reference}: {row.reference_measure}")
        ax.set_ylim(look.ylim or _limits(ys))
    ax.grid(True, linewidth=0.3, alpha=0.5)
    return titles


def _limits(values: list[float]) -> tuple[float, float]:
    """The data's range with 5% room on each side (room for the labels and the markers)."""
    values = [v for v in values if v == v]
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or max(abs(high) * 0.05, 0.05)
    return low - pad, high + pad
