"""`rubric evaluate meta`: agreement of evaluations with a reference, per run, per topic, per pair;
and (``--confusion``) the automatic x manual nugget assignment matrix.

Registered by cli/evaluate.py (``app.command("meta")(meta_command)``). Thin: parse options, call
:mod:`rubric.evaluate.meta` / :mod:`rubric.evaluate.assignment_agreement`, print; figures come
from :mod:`rubric.plots` (matplotlib, imported only with --plot).
"""

from __future__ import annotations

from typing import Annotated

import typer

from rubric.cli import choices
from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, emit, info
from rubric.errors import UserError
from rubric.plots import check_plot, parse_limits


@opt.option_groups
def meta_command(
    evaluations: Annotated[
        list[str],
        typer.Argument(
            help="Per-(run, query) score tables of the evaluations to check, one condition each: "
            "`evaluate leaderboard -q` or `evaluate cover -q` TSV, `evaluate nuggets -o` TSV, trec_eval -q "
            "output (a folder of them: one file per run), or a run-level leaderboard. NAME=PATH names a "
            "condition. With --confusion: two ASSIGNED files (automatic, manual)."
        ),
    ],
    reference: Annotated[
        list[str],
        typer.Option(
            "--reference",
            "-R",
            help="The reference evaluation (y axis), in any of the same formats, or an official "
            'leaderboard: {"run": rank} JSON or a TSV of run scores (run level only). Repeatable: the '
            "files form one table (e.g. one trec_eval -q file per run). NAME=PATH names it.",
        ),
    ] = None,
    measures: Annotated[
        list[str],
        typer.Option(
            "--measure",
            "-m",
            help="Measure(s) to compare, as named in the tables (ndcg_cut.10 finds ndcg_cut_10); one row "
            "per condition and measure. [default: every measure all tables have]",
        ),
    ] = None,
    reference_measure: Annotated[
        str | None,
        typer.Option(
            "--reference-measure",
            help="The reference's measure for every row (e.g. compare cover@20 with ndcg_cut_10). "
            "[default: the same name as -m; the only one when the reference has one]",
        ),
    ] = None,
    digits: Annotated[
        int,
        typer.Option(
            "--digits",
            help="Round scores to this many decimals before ranking (4 = as trec_eval prints them, as "
            "`evaluate correlate` does; -1 = full precision).",
        ),
    ] = 4,
    resamples: Annotated[
        int,
        typer.Option("--resamples", min=0, help="Bootstrap resamples of topics for the intervals (0: none)."),
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 42,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Coverage of the bootstrap intervals.")
    ] = 0.95,
    fmt: Annotated[
        choices.ReportFormat, typer.Option("--format", "-f", help="tsv, json or latex (booktabs).")
    ] = "tsv",
    output: opt.ReportPath = None,
    per_topic: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--per-topic",
            help="Also write each topic's Spearman and Kendall between the runs' orderings (TSV: "
            "condition, measure, query, runs, spearman, kendall; query 'all' = run level).",
        ),
    ] = None,
    scatter: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--scatter",
            help="Also write the scatter's points as TSV (condition, measure, reference_measure, run, "
            "query, evaluation, reference; query 'all' = the run's scores).",
        ),
    ] = None,
    plot: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--plot",
            help="Draw the figure (.png, .svg or .pdf): the scatter of evaluation vs reference (runs "
            "large, topic/run pairs small, the three taus in each panel's title); with --confusion the "
            "heatmap. Needs matplotlib: pip install 'rubric-workbench[plot]'.",
        ),
    ] = None,
    label_runs: Annotated[
        bool,
        typer.Option(
            "--label-runs",
            help="Write run names next to their points, where they overlap nothing; when some name finds "
            "no free place, number the runs and name them in a key beside the panels.",
        ),
    ] = False,
    xlim: Annotated[
        str | None,
        typer.Option(
            "--xlim", metavar="LO,HI", help="Fix the x axis range of the scatter. [default: the data's]"
        ),
    ] = None,
    ylim: Annotated[
        str | None,
        typer.Option(
            "--ylim", metavar="LO,HI", help="Fix the y axis range of the scatter. [default: the data's]"
        ),
    ] = None,
    plot_size: Annotated[
        float,
        typer.Option("--plot-size", min=1.0, max=30.0, help="Size of one scatter panel, in inches (square)."),
    ] = 4.0,
    dpi: opt.Dpi = 100,
    by_row: opt.ByRow = False,
    confusion: Annotated[
        bool,
        typer.Option(
            "--confusion",
            help="Compare two ASSIGNED files instead: 3x3 support/partial_support/not_support matrix "
            "(rows: the first file, columns: the second) with shares and counts.",
        ),
    ] = False,
    subset: opt.QueryOptions = ...,
) -> None:
    """How well an evaluation agrees with a reference: Kendall's tau three ways, as the papers do.

    For each condition and measure: run-level Kendall tau-b and Spearman (equal to `evaluate
    correlate` on the run means), the average of per-topic taus (topics where a side has fewer
    than 2 distinct values are left out and listed on stderr) and tau over all topic/run pairs,
    with the numbers of runs, topics and pairs and bootstrap intervals over topics (seeded).
    Only (run, topic) pairs scored on both sides count.

    Example: rubric evaluate meta auto=auto.tsv edited=edited.tsv -R manual=manual.tsv -m V_strict
    -m A_strict --plot figure4.png
    """
    from rubric.evaluate.meta import MetaReport, meta_output
    from rubric.plots.scatter import ScatterStyle

    check_plot(plot)  # a bad suffix or a missing matplotlib fails before any file is read
    if confusion and scatter is not None:
        raise UserError("--scatter: the points of runs and topics; not used with --confusion")
    look = ScatterStyle(
        label_runs, parse_limits("--xlim", xlim), parse_limits("--ylim", ylim), plot_size, dpi
    )
    result = meta_output(
        evaluations,
        reference=reference,
        measures=measures,
        reference_measure=reference_measure,
        digits=digits,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        fmt=fmt,
        confusion=confusion,
        per_topic=per_topic,
        label_runs=label_runs,
        queries=subset.selection,
    )
    emit(result.render(fmt), output)
    for note in result.notes:
        info(note)
    if isinstance(result, MetaReport) and per_topic is not None:  # never with --confusion
        info(result.write_per_topic(per_topic))
    if isinstance(result, MetaReport) and scatter is not None:
        info(result.write_scatter(scatter))
    if plot is not None:
        from rubric.plots.figures import meta_figure

        meta_figure(result, plot, look=look, by_row=by_row)
        info(f"wrote {plot}")
