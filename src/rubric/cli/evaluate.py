"""`rubric evaluate`: qrels from grades, trec_eval-exact leaderboards, Cover, correlation, significance.

Thin: parse options, call :mod:`rubric.evaluate`, print. Nothing heavy (pytrec_eval, scipy) is
imported before a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rubric.cli import choices
from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, OutputPath, emit, info, phase_app
from rubric.cli.meta import meta_command
from rubric.cli.rag_nuggets import nuggets_command, support_command
from rubric.errors import UserError

if TYPE_CHECKING:
    from rubric.evaluate.report import Rendered

app = phase_app(
    "Turn grades into system scores: qrels, leaderboards, Cover, correlation, significance, meta-evaluation."
)


def _notes(notes: list[str]) -> None:
    for note in notes:
        info(note)


def _write(done: Rendered, output: Path | None) -> None:
    """A report to ``-o`` or stdout, its stderr lines around it."""
    _notes(done.before)
    emit(done.text, output)
    _notes(done.notes)


def _significance_level(value: float) -> float:
    if not 0 < value < 1:
        raise typer.BadParameter(f"{value} is not between 0 and 1 (exclusive)")
    return value


MEASURE_HELP = (
    "Measure (repeatable; several in one value with commas: -m 'nDCG@10,P@5'), in any case: "
    "trec_eval names (ndcg_cut.10, P.5,10, map, recip_rank, Rprec, recall.1000, bpref, official, "
    "all_trec, ...) and the names trec_eval prints (P_10, ndcg_cut_10); ir_measures names "
    "(nDCG@10, P(rel=2)@20, AP(rel=2), R@1000, RR(rel=2)@10 = MS MARCO MRR@10, Judged@10, ERR@20, "
    "nDCG(judged_only=True)@10); alpha_nDCG@k over per-item qrels (--per-item)."
)
GradedFile = Annotated[Path, typer.Argument(help="Graded passages file (.jsonl or .jsonl.gz).")]


@app.command("qrels")
@opt.option_groups
def qrels_command(
    graded: GradedFile,
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="Qrels file to write (TREC format).")
    ] = ...,
    kind: opt.KindOptions = ...,
    label: Annotated[
        str,
        typer.Option(
            "--label",
            help="Label of a passage: 'max' (best grade over the items), 'count' (items graded >= "
            "--min-grade; for answer-verification prompts the correct items) or 'nth:M' (M-th best "
            "grade: at least M items). Direct prompts: their grade; with 'count' 1 when it is >= "
            "--min-grade, else 0 (binary qrels).",
        ),
    ] = "max",
    min_grade: Annotated[
        int, typer.Option("--min-grade", min=0, max=5, help="Threshold of --label count.")
    ] = 1,
    per_item: Annotated[
        bool,
        typer.Option(
            "--per-item", help="One line per (passage, item), item id in column 2 (intent-aware qrels)."
        ),
    ] = False,
    facets: Annotated[
        bool,
        typer.Option(
            "--per-facet",
            help="CAR-style facet qrels: one line per (query facet, passage), query id 'qid/facet' (the "
            "item ids' prefix), labelled from that facet's items, as the original's --qrel-query-facets.",
        ),
    ] = False,
    facet_bank: Annotated[
        Path | None,
        typer.Option(
            "--bank",
            help="--per-facet: the facet bank, whose facets every direct grade (and facet-less item) "
            "counts for.",
        ),
    ] = None,
    prefer: Annotated[
        str | None,
        typer.Option(
            "--prefer",
            help="Prompt class whose item grades win where they exist, e.g. HumanReview (the reviewers' "
            "grades from `rubric verify apply`); the selected grades count elsewhere. Several reviewers of "
            "one cell: their lower median. [default: none]",
        ),
    ] = None,
    grade_map: Annotated[
        str | None,
        typer.Option(
            "--map",
            help="Map every label to another scale as it is written: 'G=L,...' gives L from label G up "
            "(highest G wins, below all: 0), e.g. '2=1,4=2,5=3' writes 0-5 labels as 0-3 (0-1 -> 0, "
            "2-3 -> 1, 4 -> 2, 5 -> 3). Default: labels as they are.",
        ),
    ] = None,
    subset: opt.QueryOptions = ...,
) -> None:
    """Rubric-Qrels / EXAM-Qrels: one relevance label per graded passage.

    Passages without a grade of the selected kind get no line; their number is printed. Use the
    qrels with `rubric evaluate leaderboard -l T` (or trec_eval -l T) to count grades >= T as
    relevant; nDCG uses the labels as gains.

    Example: rubric evaluate qrels graded.jsonl.gz --prompt-class NuggetSelfRatedPrompt -o rubric.qrels

    Example: rubric evaluate qrels graded.jsonl.gz -p UMBRELA --map 2=1,4=2,5=3 -o submission.qrels
    """
    from rubric.evaluate.qrels import write_qrels_file

    grades = kind.grade_filter()
    notes = write_qrels_file(
        graded,
        output,
        selection=grades,
        label=label,
        min_grade=min_grade,
        per_item=per_item,
        facets=facets,
        facet_bank=facet_bank,
        prefer=prefer,
        queries=subset.selection,
        grade_map=grade_map,
    )
    _notes(notes)


@app.command("representative")
def representative_command(
    runs: opt.Runs,
    qrels: opt.QrelsFile,
    measure: Annotated[str, typer.Option("--measure", "-m", help=MEASURE_HELP)],
    level: opt.Level = 1,
    complete: Annotated[
        bool,
        typer.Option(
            "--complete/--no-complete", help="trec_eval -c (as the original): a missing topic scores 0."
        ),
    ] = True,
    top: Annotated[
        int | None, typer.Option("--top", min=1, help="Only the N most representative topics.")
    ] = None,
    name_from: opt.NameFrom = "tag",
    output: opt.ReportPath = None,
) -> None:
    """Representative topics: each topic's ranking of the runs against the ranking over all topics.

    Kendall's tau-b per topic, highest first (the original's leaderboard_repr_queries): the
    topics that alone come closest to the full leaderboard, e.g. the first to review or judge.

    Example: rubric evaluate representative --qrels rubric.qrels --run runs/ -m ndcg_cut.10 --top 5
    """
    from rubric.evaluate.representative import representative_output

    done = representative_output(
        qrels, runs, measure, level=level, complete=complete, top=top, name_from=name_from
    )
    _write(done, output)


@app.command("learn")
def learn_command(
    graded: GradedFile,
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="Qrels file to write (learned labels).")
    ] = ...,
    judgments: Annotated[
        Path | None,
        typer.Option(
            "--judgments",
            help="Human qrels to learn from (default: the judgments in GRADED); only passages with a "
            "human label are trained on, every passage is labelled.",
        ),
    ] = None,
    features: Annotated[
        choices.FeatureSet,
        typer.Option(
            "--features",
            help="Grades to learn from, the original's feature sets: all, questions "
            "(QuestionSelfRatedUnanswerablePromptWithChoices), nuggets (NuggetSelfRatedPrompt), direct "
            "(FagB, FagB_few, HELM, Sun, Sun_few, Thomas).",
        ),
    ] = "all",
    classifier: Annotated[
        choices.Classifier,
        typer.Option("--classifier", help="extra-trees or random-forest (the original's settings)."),
    ] = "extra-trees",
    folds: Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds of topics.")] = 5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the topic folds and the classifier.")] = 0,
    apply: Annotated[
        Path | None,
        typer.Option(
            "--apply",
            help="Label the passages of this other graded file instead (train on dev, label test): "
            "graded with the same prompt classes; its own judgments, if any, are only compared with. "
            "[default: label GRADED itself]",
        ),
    ] = None,
) -> None:
    """Learned labels: a classifier from each passage's grades to human relevance labels.

    As TREMA-UNH's LLMJudge submission: features of all the passage's grades, ExtraTrees or
    RandomForest. Cross-validated by topic (each fold's train and held-out kappa, and their mean,
    on stderr), then trained on every labelled passage to label every passage of GRADED, or of
    the --apply file. Needs scikit-learn (pip install 'rubric-workbench[learn]').

    Example: rubric evaluate learn dev.jsonl.gz --judgments llm4eval_dev_qrel_2024.txt -o learned.qrels

    Example: rubric evaluate learn dev.jsonl.gz --apply test.jsonl.gz -o test-learned.qrels
    """
    from rubric.evaluate.learn import learn_file

    _notes(
        learn_file(
            graded,
            output,
            judgments=judgments,
            feature_set=features,
            method=classifier,
            folds=folds,
            seed=seed,
            apply=apply,
        )
    )


@app.command("leaderboard")
@opt.option_groups
def leaderboard_command(
    runs: opt.Runs,
    qrels: opt.QrelsFile,
    measures: Annotated[
        list[str],
        typer.Option("--measure", "-m", help=MEASURE_HELP + " The first one orders the leaderboard."),
    ],
    level: opt.Level = 1,
    complete: Annotated[
        bool,
        typer.Option(
            "--complete",
            "-c",
            help="trec_eval -c: average over all qrels queries (a missing query scores 0).",
        ),
    ] = False,
    judged_only: Annotated[
        bool, typer.Option("--judged-only", "-J", help="trec_eval -J: drop unjudged documents.")
    ] = False,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also per-query values (trec_eval -q).")
    ] = False,
    fmt: Annotated[
        choices.LeaderboardFormat,
        typer.Option(
            "--format",
            "-f",
            help="tsv (run, measure, value, stderr, n_queries; with -q: run, measure, query, value), csv "
            "(the same), json (with -q: per-query values), latex, or trec_eval (exactly trec_eval's "
            "output, run after run).",
        ),
    ] = "tsv",
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="One row per run, one column per measure (with -f tsv or csv), as a paper prints it.",
        ),
    ] = False,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="RUN",
            help="--wide: mark each value + (-) where the run is significantly better (worse) than this "
            "run: paired t-test on the queries both have, Holm over the runs, p < 0.05 (as ranx marks its "
            "report). [default: no marks]",
        ),
    ] = None,
    max_docs: Annotated[
        int | None,
        typer.Option(
            "--max-docs",
            min=1,
            help="trec_eval -M: cut every ranking to its first N documents. [default: all]",
        ),
    ] = None,
    num_docs: Annotated[
        int | None,
        typer.Option(
            "--num-docs",
            min=0,
            help="trec_eval -N: documents in the collection; only utility's fourth coefficient (a "
            "non-relevant document left unretrieved) uses it. [default: 0, as trec_eval]",
        ),
    ] = None,
    zscores: Annotated[
        Path | None,
        typer.Option(
            "--zscores",
            metavar="FILE",
            help="trec_eval -Z: print each value as a z-score against the file's 'qid measure mean std_dev' "
            "lines (-1000000 where it has none). Not with -c. [default: raw values]",
        ),
    ] = None,
    name_from: opt.NameFrom = "tag",
    digits: Annotated[
        int, typer.Option("--digits", min=0, max=17, help="Decimals in tsv (trec_eval prints 4).")
    ] = 4,
    output: opt.ReportPath = None,
    subset: opt.QueryOptions = ...,
) -> None:
    """Score runs against qrels, exactly as trec_eval 9.0.8 does.

    Run scores are read as 32-bit floats and ties broken by docid descending, as trec_eval and
    NIST do. stderr is the sample standard deviation of the per-query values over sqrt(n).

    Example: rubric evaluate leaderboard --qrels rubric.qrels --run runs/ -m nDCG@10 -m "AP(rel=2)"
    """
    from rubric.evaluate.leaderboards import leaderboard_output

    queries = subset.selection  # called by the library once it has checked the options
    from rubric.evaluate.wide import Marks

    marks = Marks(baseline) if baseline is not None else None
    done = leaderboard_output(
        qrels,
        runs,
        measures,
        level=level,
        complete=complete,
        judged_only=judged_only,
        per_query=per_query,
        fmt=fmt,
        digits=digits,
        name_from=name_from,
        queries=queries,
        wide=wide,
        marks=marks,
        max_docs=max_docs,
        num_docs=num_docs,
        zscores=zscores,
    )
    _write(done, output)


@app.command("cover")
@opt.option_groups
def cover_command(
    graded: Annotated[
        Path, typer.Argument(help="Graded passages file with rankings (from `rubric convert runs`).")
    ],
    k: Annotated[
        int, typer.Option("-k", "--top-k", min=1, help="Passages of each run that count, per query.")
    ] = 20,
    min_grade: Annotated[
        int,
        typer.Option(
            "--min-grade",
            "-t",
            min=0,
            max=5,
            help="An item is answered by a passage graded >= this (1 for answer checks).",
        ),
    ] = 4,
    normalized: Annotated[
        bool,
        typer.Option("--normalized", help="Divide by the items some pooled passage answers, not all items."),
    ] = False,
    bank: Annotated[
        Path | None,
        typer.Option(
            "--bank",
            help="Test bank: its items are the denominator, and only its queries count. Without it: the "
            "items found in the grades of each query.",
        ),
    ] = None,
    complete: Annotated[
        bool,
        typer.Option(
            "--complete",
            "-c",
            help="Like trec_eval -c: average over all of the bank's queries (a query the passages file "
            "lacks counts 0), not only the queries evaluated.",
        ),
    ] = False,
    correct_answered: Annotated[
        bool,
        typer.Option(
            "--correct-answered",
            help="Count an item answered when the grade lists it in correctAnswered (the original tool's "
            "mode without -r), not by self-rating >= --min-grade.",
        ),
    ] = False,
    overall: Annotated[
        bool,
        typer.Option(
            "--overall",
            help="Add the original tool's `_overall_` row: items answered by any passage of the file "
            "(the upper bound of every run).",
        ),
    ] = False,
    kind: opt.KindOptions = ...,
    per_query: Annotated[
        bool,
        typer.Option(
            "--per-query", "-q", help="TSV: run, measure, query, value (and 'all'), as leaderboard -q."
        ),
    ] = False,
    fmt: Annotated[choices.ReportFormat, typer.Option("--format", "-f", help="tsv, json or latex.")] = "tsv",
    output: opt.ReportPath = None,
    subset: opt.QueryOptions = ...,
) -> None:
    """Rubric-Cover@k per run: share of a query's items answered by the run's first k passages.

    Runs come from the rankings stored in the passages file. Every run is averaged over the
    queries evaluated (the file's, those in the bank when one is given; with -c all of the
    bank's): a query where a run has no passage counts as 0. Bank queries the file lacks are
    listed on stderr.

    Example: rubric evaluate cover graded.jsonl.gz -k 20 --min-grade 4 --bank questions.jsonl.gz
    """
    from rubric.evaluate.coverage import cover_output

    done = cover_output(
        graded,
        fmt=fmt,
        per_query=per_query,
        k=k,
        min_grade=min_grade,
        selection=kind.grade_filter(),
        bank=bank,
        normalized=normalized,
        complete=complete,
        queries=subset.selection,
        correct_answered=correct_answered,
        overall=overall,
    )
    _write(done, output)


@app.command("correlate")
def correlate_command(
    official: Annotated[
        Path,
        typer.Option(
            "--official", help='Official leaderboard: {"run": rank} JSON, or a TSV of scores per run.'
        ),
    ],
    leaderboard: Annotated[
        Path | None,
        typer.Option("--leaderboard", "-L", help="Our leaderboard TSV (from `rubric evaluate leaderboard`)."),
    ] = None,
    measures: Annotated[
        list[str],
        typer.Option(
            "--measure",
            "-m",
            help="Measure of the leaderboard TSV to rank by (one; default: its first); with --sweep, the "
            "measures of the grid (repeatable).",
        ),
    ] = None,
    official_measure: Annotated[
        str | None,
        typer.Option("--official-measure", help="Score column of an official TSV (default: --measure)."),
    ] = None,
    digits: Annotated[
        int,
        typer.Option(
            "--digits",
            min=-1,
            max=17,
            help="Round our scores to this many decimals before ranking (4 = as trec_eval prints them, "
            "which the original tool did; -1 = full precision).",
        ),
    ] = 4,
    sweep: Annotated[
        bool,
        typer.Option(
            "--sweep", help="Evaluate and correlate the grid --qrels x --level x --measure in one call."
        ),
    ] = False,
    qrels: Annotated[
        list[Path], typer.Option("--qrels", help="--sweep: qrels files or directories (repeatable).")
    ] = None,
    runs: Annotated[
        list[Path], typer.Option("--run", "-r", metavar="RUN", help="--sweep: " + opt.RUN_HELP)
    ] = None,
    levels: Annotated[
        list[int], typer.Option("--level", "-l", min=1, help="--sweep: relevance levels (default 1).")
    ] = None,
    output: opt.ReportPath = None,
    query: Annotated[
        list[str], typer.Option("--query", help="--sweep: only this query id (repeatable).")
    ] = None,
    queries: Annotated[
        Path | None,
        typer.Option("--queries", help="--sweep: only the queries of this file (as for `leaderboard`)."),
    ] = None,
    name_from: Annotated[
        choices.NameFrom,
        typer.Option("--name-from", help="--sweep: run name from 'tag' (column 6) or 'file' (its name)."),
    ] = "tag",
) -> None:
    """Spearman and Kendall tau-b between our ranking of runs and the official one.

    Ties get average ranks (scipy). Runs on one side only are listed and left out; fewer than 3
    common runs is an error. --sweep writes `method, min_rating, trec_eval_metric, spearman,
    kendall` for every qrels file x level x measure, like the original tool's correlation tables;
    a `nan` cell (every run scores the same, e.g. no passage is graded >= the level) is explained
    on stderr.

    Example: rubric evaluate correlate --sweep --qrels phase3-qrels/ --run runs/ --official
    official.json -m ndcg_cut.10 -m map -l 1 -l 4
    """
    from rubric.evaluate.correlation import SweepGrid, correlation_output

    measure: str | None = None
    if not sweep:  # one --measure: the leaderboard's column; with --sweep: the grid's measures
        if len(measures or []) > 1:
            raise UserError("--measure: give one without --sweep (the leaderboard column to rank by)")
        measure = measures[0] if measures else None
        measures = []
    grid = SweepGrid(qrels, runs, measures, levels, query, queries, name_from)
    _write(
        correlation_output(
            official,
            leaderboard=leaderboard,
            measure=measure,
            official_measure=official_measure,
            digits=digits,
            sweep_grid=sweep,
            grid=grid,
        ),
        output,
    )


@app.command("compare")
@opt.option_groups
def compare_command(
    runs: opt.Runs,
    qrels: opt.QrelsFile,
    measures: Annotated[
        list[str],
        typer.Option(
            "--measure", "-m", help="Measure(s), as in `leaderboard` (repeatable, or comma-separated)."
        ),
    ],
    test: Annotated[
        choices.Test, typer.Option("--test", help="t (paired t-test), randomization or bootstrap.")
    ] = "t",
    correction: Annotated[
        choices.Correction,
        typer.Option("--correction", help="holm, bonferroni or none, over all pairs and measures."),
    ] = "holm",
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="Compare every run with this run only (default: all pairs)."),
    ] = None,
    level: opt.Level = 1,
    complete: Annotated[
        bool,
        typer.Option(
            "--complete",
            "-c",
            help="Every qrels query counts (missing = 0); else the queries both runs have.",
        ),
    ] = False,
    n_resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Permutations / bootstrap samples.")
    ] = 10_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the resampling tests.")] = 42,
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha",
            callback=_significance_level,
            help="Significance level for the 'significant' column (between 0 and 1).",
        ),
    ] = 0.05,
    name_from: opt.NameFrom = "tag",
    output: opt.ReportPath = None,
    subset: opt.QueryOptions = ...,
) -> None:
    """Paired significance tests between runs on per-query scores, with effect sizes.

    Output: run_a, run_b, measure, mean_a, mean_b, diff (b - a), p_value, p_adjusted,
    effect_size (Cohen's d of the paired differences), n_queries, significant.

    Example: rubric evaluate compare --qrels rubric.qrels --run bm25.run --run bert.run -m nDCG@10
    --test randomization
    """
    from rubric.evaluate.significance import compare

    report = compare(
        qrels,
        runs,
        measures,
        test=test,
        correction=correction,
        baseline=baseline,
        level=level,
        complete=complete,
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
        name_from=name_from,
        queries=subset.selection,
    )
    _notes(report.notes)
    emit(report.to_tsv(), output)


@app.command("estimate")
@opt.option_groups
def estimate_command(
    runs: opt.Runs,
    measures: Annotated[
        list[str],
        typer.Option(
            "--measure", "-m", help=MEASURE_HELP.split("; alpha_nDCG")[0] + ". The first orders the runs."
        ),
    ],
    human: Annotated[
        Path | None,
        typer.Option(
            "--human",
            help="Human judgments (TREC qrels) of a uniform random sample of the topics, every pooled "
            "passage of a judged topic judged. [default: the HumanReview grades of --graded]",
        ),
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="LLM qrels (TREC format) of every topic.")
    ] = None,
    graded: Annotated[
        Path | None,
        typer.Option(
            "--graded",
            help="Instead of --qrels: a graded file whose selected grades give the LLM labels (--label, "
            "--min-grade, --prompt-class, ...), and whose HumanReview grades (`verify apply`) give the "
            "human ones where --human is not given.",
        ),
    ] = None,
    label: opt.Label = "max",
    min_grade: opt.CountFrom = 1,
    kind: opt.KindOptions = ...,
    level: opt.Level = 1,
    confidence: Annotated[
        float,
        typer.Option(
            "--confidence",
            help="Coverage of the intervals, in (0, 1): over the random draw of the judged topics, the "
            "share of draws whose interval holds a run's mean over all topics on human labels; for each "
            "run on its own, not all runs at once.",
        ),
    ] = 0.95,
    pairs: Annotated[
        bool,
        typer.Option(
            "--pairs",
            help="Also every pair of runs: the difference (a - b), its interval, resolved (a>b, a<b) "
            "where the interval excludes 0, else no.",
        ),
    ] = False,
    simultaneous: Annotated[
        bool,
        typer.Option(
            "--simultaneous",
            help="With --pairs: intervals that hold for all pairs of a measure at once (Bonferroni, "
            "1 - (1 - confidence) / pairs each), so that every 'resolved' holds together. [default: "
            "each pair's interval on its own, as the output says]",
        ),
    ] = False,
    mode: Annotated[
        choices.EstimateMode,
        typer.Option(
            "--mode",
            help="finite (Student t, finite-population correction: the judged topics are a sample of "
            "these topics) or ppi_py (normal quantile, no correction, unjudged topics as the unlabelled "
            "set: the reference implementation's numbers).",
        ),
    ] = "finite",
    fmt: Annotated[
        choices.ReportFormat,
        typer.Option("--format", "-f", help="tsv (estimates, then pairs), json or latex."),
    ] = "tsv",
    digits: Annotated[int, typer.Option("--digits", min=0, max=17, help="Decimals in tsv.")] = 4,
    name_from: opt.NameFrom = "tag",
    output: opt.ReportPath = None,
    plot: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--plot",
            help="Draw the forest plot (.png, .svg or .pdf): per run the PPI++ and human-only intervals "
            "and the LLM-only mean. Needs matplotlib: pip install 'rubric-workbench[plot]'.",
        ),
    ] = None,
    subset: opt.QueryOptions = ...,
) -> None:
    """Leaderboard from LLM labels on every topic and human labels on a random few, with intervals.

    Per run and measure: the prediction-powered estimate PPI++ of the all-topic mean on human
    labels (the column to report; weight 0 means it is exactly the human-only estimate), the
    human-only mean over the judged topics, PPI (weight 1) and the LLM-only mean, with
    intervals. An interval's coverage is over the random draw of the judged topics, for each run
    on its own (not simultaneous); it is never narrower than what the topics the judged ones may
    all have missed allow, never outside the measure's range, and of zero width only when every
    topic is judged. The judged topics must be a uniform random sample of the topics (`rubric
    verify sample` draws one; give this command every topic, not --queries of that sample);
    nothing in the data can show it. A run that ranks nothing for a topic scores 0 there
    (trec_eval -c). Human judgments of a topic without LLM labels, or fewer than 2 judged
    topics, are an error.

    Example: rubric evaluate estimate --run runs/ --qrels llm.qrels --human nist.qrels -m nDCG@10
    -l 2 --pairs --plot forest.png
    """
    from rubric.evaluate.estimate import estimate_output
    from rubric.plots import check_plot

    check_plot(plot)  # a bad suffix or a missing matplotlib fails before any file is read
    done, report = estimate_output(
        runs,
        measures,
        llm_qrels=qrels,
        human_qrels=human,
        graded=graded,
        grades=kind.grade_filter(),
        label=label,
        min_grade=min_grade,
        level=level,
        confidence=confidence,
        mode=mode,
        pairs=pairs,
        simultaneous=simultaneous,
        fmt=fmt,
        digits=digits,
        name_from=name_from,
        queries=subset.selection,
    )
    _write(done, output)
    if plot is not None:
        from rubric.plots.forest import forest_plot

        forest_plot(report, plot)
        info(f"wrote {plot}")


# `rubric evaluate nuggets` (AutoNuggetizer scores) lives with the other RAG nugget commands.
app.command("nuggets")(nuggets_command)
app.command("support")(support_command)
app.command("meta")(meta_command)
