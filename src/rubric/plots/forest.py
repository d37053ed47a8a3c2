"""The forest plot of `rubric evaluate estimate --plot`: each run's estimates side by side.

One panel per measure, one line per run (sorted by the PPI++ estimate, best on top): the PPI++
interval as a thick bar with its estimate, the human-only interval as a thin bar just below it
(the judged topics alone), and the LLM-only mean as a hollow diamond (no interval: it takes the
LLM labels as true). Where the diamond lies outside the bars, the LLM labels are biased for that
run. The judged and total numbers of topics and the confidence are in the title.
"""

from __future__ import annotations

from pathlib import Path

from rubric.evaluate.estimate import EstimateReport
from rubric.plots import new_figure, plot_format, render, style, write_bytes

PPIPP_COLOUR = "#1f77b4"
HUMAN_COLOUR = "#7f7f7f"
LLM_COLOUR = "#d62728"


def forest_plot(report: EstimateReport, path: str | Path) -> None:
    """Draw ``report`` to ``path`` (.png, .svg or .pdf)."""
    fmt = plot_format(path)
    with style():
        data = render(forest_figure(report), fmt)
    write_bytes(path, data)


def forest_figure(report: EstimateReport):  # noqa: ANN201 - a matplotlib Figure (an optional dependency)
    """The figure of :func:`forest_plot` (call inside :func:`rubric.plots.style`)."""
    measures = report.measures
    runs = report.runs
    by = {(r.run, r.measure): r for r in report.rows}
    # room for the run names, the title, the x labels and the legend row under them
    label_in = min(3.0, 0.6 + 0.065 * max(len(r) for r in runs))
    height = max(3.2, 1.5 + 0.22 * len(runs))
    fig = new_figure(max(6.4, label_in + 3.2 * len(measures)), height)
    axes = fig.subplots(1, len(measures), sharey=True, squeeze=False)[0]
    ys = list(range(len(runs)))[::-1]  # best on top
    for ax, m in zip(axes, measures, strict=True):
        rows = [by[(run, m)] for run in runs]
        for y, r in zip(ys, rows, strict=True):
            ax.plot(r.ppipp[1:], [y + 0.12] * 2, color=PPIPP_COLOUR, lw=2.6, solid_capstyle="butt")
            ax.plot(r.human[1:], [y - 0.18] * 2, color=HUMAN_COLOUR, lw=1.0)
        ax.plot(
            [r.ppipp[0] for r in rows],
            [y + 0.12 for y in ys],
            "o",
            color=PPIPP_COLOUR,
            ms=4,
            label="PPI++ (thick bar: its interval)",
        )
        ax.plot(
            [r.human[0] for r in rows],
            [y - 0.18 for y in ys],
            "|",
            color=HUMAN_COLOUR,
            ms=6,
            label="human only (thin bar)",
        )
        ax.plot([r.llm for r in rows], ys, "D", mfc="none", mec=LLM_COLOUR, ms=4.5, label="LLM only")
        ax.set_title(m)
        ax.set_xlabel("all-topic mean on human labels", fontsize=8)
        ax.grid(axis="x", color="#dddddd", lw=0.6)
        ax.set_ylim(-0.8, len(runs) - 0.2)
    axes[0].set_yticks(ys, runs)
    axes[0].tick_params(axis="y", labelsize=7 if len(runs) > 20 else 9)
    # the legend sits under the x label, off the data
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=7, frameon=False)
    fig.suptitle(
        f"{report.n_judged} of {report.n_topics} topics judged by humans; "
        f"{report.confidence:g} intervals, each run on its own",
        fontsize=10,
    )
    return fig
