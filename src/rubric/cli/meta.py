"""`rubric evaluate meta`: agreement of evaluations with a reference, per run, per topic, per pair;
and (``--confusion``) the automatic x manual nugget assignment matrix.

Registered by cli/evaluate.py (``app.command("meta")(meta_command)``). Thin: parse options, call
:mod:`rubric.evaluate.meta` / :mod:`rubric.evaluate.assignment_agreement`, print; figures come
from :mod:`rubric.plots` (matplotlib, imported only with --plot).
"""

from __future__ import annotations

import typer

from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, emit, info
from rubric.errors import UserError


@opt.option_groups
def meta_command(
    evaluations: list[str] = typer.Argument(
        ...,
        help="Per-(run, query) score tables of the evaluations to check, one condition each: "
        "`evaluate leaderboard -q` or `evaluate cover -q` TSV, `evaluate nuggets -o` TSV, trec_eval -q "
        "output (a folder of them: one file per run), or a run-level leaderboard. NAME=PATH names a "
        "condition. With --confusion: two ASSIGNED files (automatic, manual).",
    ),
    reference: list[str] = typer.Option(
        None,
        "--reference",
        "-R",
        help="The reference evaluation (y axis), in any of the same formats, or an official "
        'leaderboard: {"run": rank} JSON or a TSV of run scores (run level only). Repeatable: the '
        "files form one table (e.g. one trec_eval -q file per run). NAME=PATH names it.",
    ),
    measures: list[str] = typer.Option(
        None,
        "--measure",
        "-m",
        help="Measure(s) to compare, as named in the tables (ndcg_cut.10 finds ndcg_cut_10); one row "
        "per condition and measure. [default: every measure all tables have]",
    ),
    reference_measure: str | None = typer.Option(
        None,
        "--reference-measure",
        help="The reference's measure for every row (e.g. compare cover@20 with ndcg_cut_10). "
        "[default: the same name as -m; the only one when the reference has one]",
    ),
    digits: int = typer.Option(
        4,
        "--digits",
        help="Round scores to this many decimals before ranking (4 = as trec_eval prints them, as "
        "`evaluate correlate` does; -1 = full precision).",
    ),
    resamples: int = typer.Option(
        1000, "--resamples", min=0, help="Bootstrap resamples of topics for the intervals (0: none)."
    ),
    seed: int = typer.Option(42, "--seed", help="Seed of the bootstrap."),
    confidence: float = typer.Option(0.95, "--confidence", help="Coverage of the bootstrap intervals."),
    fmt: str = typer.Option("tsv", "--format", "-f", help="tsv, json or latex (booktabs)."),
    output: opt.ReportPath = None,
    per_topic: OptionalOutputPath = typer.Option(
        None,
        "--per-topic",
        help="Also write each topic's Spearman and Kendall between the runs' orderings (TSV: "
        "condition, measure, query, runs, spearman, kendall; query 'all' = run level).",
    ),
    plot: OptionalOutputPath = typer.Option(
        None,
        "--plot",
        help="Draw the figure (.png, .svg or .pdf): the scatter of evaluation vs reference (runs "
        "large, topic/run pairs small, the three taus in a box); with --confusion the heatmap. "
        "Needs matplotlib: pip install 'rubric-workbench[plot]'.",
    ),
    label_runs: bool = typer.Option(False, "--label-runs", help="Write run names next to their points."),
    confusion: bool = typer.Option(
        False,
        "--confusion",
        help="Compare two ASSIGNED files instead: 3x3 support/partial_support/not_support matrix "
        "(rows: the first file, columns: the second) with shares and counts.",
    ),
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
    from rubric.data.files import write_output

    if fmt not in ("tsv", "json", "latex"):
        raise UserError(f"--format: expected one of tsv, json, latex, got {fmt!r}")
    if plot is not None:
        from rubric.plots import plot_format, require_matplotlib

        plot_format(plot)  # a bad suffix or a missing matplotlib fails before any file is read
        require_matplotlib()
    chosen = subset.selection()
    if confusion:
        _confusion(evaluations, reference, measures, per_topic, label_runs, fmt, output, plot, chosen)
        return
    if not reference:
        raise UserError("--reference: give the reference evaluation (or use --confusion)")
    from rubric.evaluate.meta import meta_evaluate
    from rubric.evaluate.score_tables import read_conditions, read_reference

    ref = read_reference(reference)
    conditions = read_conditions(evaluations)
    report = meta_evaluate(
        conditions,
        ref,
        measures or None,
        reference_measure,
        None if digits < 0 else digits,
        resamples,
        seed,
        confidence,
        chosen,
    )
    emit(report.render(fmt), output)
    for note in report.notes:
        info(note)
    if per_topic is not None:
        write_output(per_topic, report.per_topic_tsv())
        info(f"wrote {per_topic}")
    if plot is not None:
        from rubric.plots.scatter import meta_scatter

        meta_scatter(report.rows, plot, ref.source, label_runs)
        info(f"wrote {plot}")


def _confusion(evaluations, reference, measures, per_topic, label_runs, fmt, output, plot, chosen) -> None:
    for option, val in (("--reference", reference), ("-m", measures), ("--per-topic", per_topic)):
        if val:
            raise UserError(f"{option}: not used with --confusion")
    if label_runs:
        raise UserError("--label-runs: not used with --confusion")
    if len(evaluations) != 2:
        raise UserError(f"--confusion: give two ASSIGNED files (automatic, manual), got {len(evaluations)}")
    from rubric.evaluate.assignment_agreement import assignment_confusion

    result = assignment_confusion(evaluations[0], evaluations[1], chosen)
    emit(result.render(fmt), output)
    info(result.summary())
    if result.only_first or result.only_second:
        info(
            f"left out assignments in one file only: {result.only_first} in {evaluations[0]}, "
            f"{result.only_second} in {evaluations[1]}"
        )
    if plot is not None:
        from rubric.plots.heatmap import assignment_heatmap

        assignment_heatmap(result, plot)
        info(f"wrote {plot}")
