"""`rubric evaluate estimate`: leaderboards from LLM labels on every topic and human labels on a
random few, with prediction-powered estimates and confidence intervals.

LLM qrels are cheap on every topic but biased, differently for each system; human judgments are
right but affordable for a few topics. Each run's measure is computed once per topic with
trec_eval (exactly as `evaluate leaderboard` computes it) on both label sets, and
:mod:`rubric.evaluate.ppi` combines the two into estimates of the all-topic mean on human labels:
LLM only, human only, PPI and PPI++ (the weight tuned), each with an interval; the same on the
per-topic differences between two runs says which pairs the data tells apart.

The topics are the units: a judged topic has all its pooled passages judged, as TREC judges, and
the judged topics must be a uniform random sample of the topics with LLM labels (`rubric verify
sample` draws one). Nothing in the data can show that they were; the report says so.

Every topic counts for every run: a run that ranks nothing for a topic scores 0 there
(trec_eval ``-c``), so that all runs are averaged over the same topics.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rubric.data.grade_filter import GradeFilter
from rubric.data.query_selection import Queries, QuerySelection, absent_note
from rubric.data.run_columns import RunColumns
from rubric.data.table import Table, check_format, counted, fmt_cell, latex_escape, render_tables
from rubric.data.trec import NAME_FROM, Qrels
from rubric.errors import UserError, one_of
from rubric.evaluate.leaderboards import (
    RunsLike,
    as_measures,
    load_qrels,
    load_run_columns,
    unranked_note,
)
from rubric.evaluate.measures import Measure
from rubric.evaluate.ppi import MODES, Estimates, check_sizes, estimate_means
from rubric.evaluate.qrels import QrelsResult
from rubric.evaluate.report import HTML_RUNS, REPR_RUNS, Rendered, html_table, left_out, short_table
from rubric.evaluate.treceval import Evaluator, QueryValues, TrecEvalSettings

FORMATS = ("tsv", "json", "latex")

HUMAN_PROMPT_CLASS = "HumanReview"
"""The prompt class of `verify apply`'s grade records (``rubric.verify.review`` names it too;
``evaluate`` does not import ``verify``, which imports it)."""

ASSUMPTION = (
    "judged topics are assumed to be a uniform random sample of the topics with LLM labels "
    "(`rubric verify sample` draws one); the data cannot show whether they are"
)


@dataclass
class TopicValues:
    """Per-topic values of every run and measure: ``values[measure]`` is runs x topics."""

    runs: list[str]
    topics: list[str]
    values: dict[str, np.ndarray]
    results: list[QueryValues] = field(default_factory=list)


def topic_values(evaluator: Evaluator, runs: list[RunColumns], topics: list[str]) -> TopicValues:
    """Every run evaluated over ``topics`` (trec_eval ``-c``: an unranked topic scores 0)."""
    results = [evaluator.evaluate(r) for r in runs]
    values = {
        m.label: np.array([[res.values[m][t] for t in topics] for res in results], dtype=float)
        for m in evaluator.measures
    }
    return TopicValues([r.name for r in runs], topics, values, results)


@dataclass
class Row:
    """The estimates of one run (or one pair: ``run`` is ``a - b``) for one measure."""

    run: str
    measure: str
    llm: float
    human: tuple[float, float, float]
    ppi: tuple[float, float, float]
    ppipp: tuple[float, float, float]
    weight: float

    @property
    def resolved(self) -> str:
        """For a difference: which side the PPI++ interval puts above the other, if it excludes 0."""
        _, low, high = self.ppipp
        return "a>b" if low > 0 else "a<b" if high < 0 else "no"


def _rows(names: list[str], measure: str, est: Estimates) -> list[Row]:
    def cell(e, i):  # noqa: ANN001 - an Estimate and an index
        return (float(e.value[i]), float(e.low[i]), float(e.high[i]))

    return [
        Row(
            name,
            measure,
            float(est.llm[i]),
            cell(est.human, i),
            cell(est.ppi, i),
            cell(est.ppipp, i),
            float(est.ppipp.weight[i]),
        )
        for i, name in enumerate(names)
    ]


@dataclass(repr=False)
class EstimateReport:
    """Estimates per run and measure, and (when asked) per pair of runs; rendered as TSV, JSON or
    LaTeX. Runs are ordered by the PPI++ estimate of the first measure, best first."""

    rows: list[Row]
    pairs: list[Row] | None
    n_judged: int
    n_topics: int
    confidence: float
    mode: str
    judged: list[str]
    notes: list[str] = field(default_factory=list)
    simultaneous: bool = False  # pair intervals hold for all pairs of a measure at once (Bonferroni)

    @property
    def measures(self) -> list[str]:
        return list(dict.fromkeys(r.measure for r in self.rows))

    @property
    def runs(self) -> list[str]:
        return list(dict.fromkeys(r.run for r in self.rows))

    @property
    def resolved_pairs(self) -> int:
        """Pairs whose PPI++ interval excludes 0 (the data tells the two runs apart)."""
        return sum(r.resolved != "no" for r in self.pairs or [])

    # --- in a notebook: a short table of the PPI++ estimates ---------------------------------

    def _short(self, runs: int) -> tuple[str, list[list[str]], str]:
        """The heading, one row per run for the first ``runs`` runs (each measure's PPI++ estimate
        and interval) and the lines under them (runs left out, pairs resolved)."""
        cells = {(r.run, r.measure): r.ppipp for r in self.rows}
        rows = [["run", *(h for m in self.measures for h in (m, "interval"))]]
        for run in self.runs[:runs]:
            row = [run]
            for m in self.measures:
                value, low, high = cells.get((run, m), (math.nan,) * 3)
                row += [fmt_cell(value), f"[{fmt_cell(low)}, {fmt_cell(high)}]"]
            rows.append(row)
        size = f"{counted(len(self.runs), 'run')} x {counted(len(self.measures), 'measure')}"
        heading = (
            f"<{type(self).__name__}: {size}, PPI++ from {self.n_judged} of {self.n_topics} topics "
            f"judged, {self.confidence:g} intervals>"
        )
        below = [left_out(max(0, len(self.runs) - runs))]
        if self.pairs is not None:
            below.append(f"{self.resolved_pairs} of {len(self.pairs)} pairs resolved by PPI++")
        return heading, rows, "\n".join(line for line in below if line)

    def __repr__(self) -> str:
        """The PPI++ estimates of the first runs, one line per run and measure (the whole report:
        :meth:`render`, :meth:`to_dict`)."""
        heading, rows, below = self._short(REPR_RUNS)
        return short_table(heading, rows, below)

    def _repr_html_(self) -> str:
        """The same table as HTML, for Jupyter (every run up to :data:`HTML_RUNS`)."""
        heading, rows, below = self._short(HTML_RUNS)
        return html_table(heading.strip("<>"), rows, below)

    def method(self) -> str:
        """How the intervals were made, in one line."""
        level = f"{self.confidence:g} intervals"
        if self.mode == "ppi_py":
            return f"{level}: normal quantile, no finite-population correction (as ppi_py)"
        return (
            f"{level}: Student t ({self.n_judged - 1} df; PPI++ {self.n_judged - 1} - k, k the share "
            f"of its slope used), finite-population correction 1 - {self.n_judged}/{self.n_topics}, "
            "topic variance at least that of the topics the judged ones may all have missed, "
            "clipped to the measure's range; PPI++ weight cross-fit, used only where significant, "
            "clipped to [0, 1]"
        )

    def meaning(self) -> str:
        """What the numbers claim, and which to report."""
        return (
            f"report ppi++ (weight 0: exactly the human-only estimate and interval; 1: PPI); "
            f"coverage is over the random draw of the judged topics: for each run on its own (not "
            f"all runs at once), {self.confidence:.0%} of draws give an interval holding its mean over "
            f"all {self.n_topics} topics on human labels"
        )

    def header_notes(self) -> list[str]:
        return [
            f"{self.n_judged} of {self.n_topics} topics judged by humans; {self.method()}",
            self.meaning(),
            ASSUMPTION,
        ]

    def tables(self) -> list[Table]:
        head = ["run", "measure", "n_judged", "n_topics", "ppi++", "ppi++_low", "ppi++_high", "weight"]
        for what in ("human", "ppi"):
            head += [what, f"{what}_low", f"{what}_high"]
        head.append("llm")
        runs = Table(
            head,
            [
                [r.run, r.measure, self.n_judged, self.n_topics, *r.ppipp, r.weight, *r.human, *r.ppi, r.llm]
                for r in self.rows
            ],
            title="estimates",
            notes=self.header_notes(),
        )
        tables = [runs]
        if self.pairs is not None:
            pair_head = ["run_a", "run_b", "measure", "ppi++", "ppi++_low", "ppi++_high", "weight"]
            pair_head += ["resolved", "human", "human_low", "human_high", "llm_diff"]
            a_b = [r.run.split("\t") for r in self.pairs]
            tables.append(
                Table(
                    pair_head,
                    [
                        [a, b, r.measure, *r.ppipp, r.weight, r.resolved, *r.human, r.llm]
                        for (a, b), r in zip(a_b, self.pairs, strict=True)
                    ],
                    title="pairs (a - b)",
                    notes=[self.pairs_note()],
                )
            )
        return tables

    def pairs_note(self) -> str:
        pairs = self.pairs or []
        ppipp = self.resolved_pairs
        human = sum(r.human[1] > 0 or r.human[2] < 0 for r in pairs)
        per_measure = len(pairs) // max(1, len(self.measures))
        how = (
            f"simultaneous: Bonferroni over the {per_measure} pairs of a measure, all of them hold at "
            f"once with {self.confidence:.0%} coverage"
            if self.simultaneous
            else "each interval on its own (per pair, not simultaneous; --simultaneous for intervals "
            "that hold for all pairs at once)"
        )
        return (
            f"pairs resolved (interval excludes 0): {ppipp} of {len(pairs)} by PPI++, {human} by human "
            f"labels alone; {how}"
        )

    def to_dict(self) -> dict:
        def row(r: Row) -> dict:
            out = {"run": r.run, "measure": r.measure, "llm": r.llm}
            for name, (v, lo, hi) in (("human", r.human), ("ppi", r.ppi), ("ppi++", r.ppipp)):
                out[name] = {"value": v, "low": lo, "high": hi}
            out["weight"] = r.weight
            return out

        out = {
            "n_judged": self.n_judged,
            "n_topics": self.n_topics,
            "confidence": self.confidence,
            "mode": self.mode,
            "judged_topics": self.judged,
            "notes": self.header_notes(),
            "estimates": [row(r) for r in self.rows],
        }
        if self.pairs is not None:
            pairs = []
            for r in self.pairs:
                a, b = r.run.split("\t")
                entry = {"run_a": a, "run_b": b, **row(r), "resolved": r.resolved}
                del entry["run"]
                pairs.append(entry)
            out["pairs"] = pairs
        return out

    def to_latex(self, digits: int = 3) -> str:
        """One row per run: LLM-only, human-only and PPI++ with their intervals, per measure."""
        lines = [
            "\\begin{tabular}{l" + "rrr" * len(self.measures) + "}",
            "\\toprule",
            "Run & "
            + " & ".join(f"\\multicolumn{{3}}{{c}}{{{latex_escape(m)}}}" for m in self.measures)
            + " \\\\",
            " & " + " & ".join("LLM & human & PPI++" for _ in self.measures) + " \\\\",
            "\\midrule",
        ]
        by = {(r.run, r.measure): r for r in self.rows}

        def ci(v: tuple[float, float, float]) -> str:
            return f"{v[0]:.{digits}f} {{\\scriptsize [{v[1]:.{digits}f}, {v[2]:.{digits}f}]}}"

        for run in self.runs:
            cells = []
            for m in self.measures:
                r = by[(run, m)]
                cells += [f"{r.llm:.{digits}f}", ci(r.human), ci(r.ppipp)]
            lines.append(latex_escape(run) + " & " + " & ".join(cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        lines += [f"% {latex_escape(n)}" for n in self.header_notes()]
        return "\n".join(lines) + "\n"

    def render(self, fmt: str, digits: int = 4) -> str:
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=1) + "\n"
        if fmt == "latex":
            return self.to_latex(min(digits, 3))
        return render_tables(self.tables(), "tsv")


def _ordered(report_rows: list[Row], first: str) -> list[Row]:
    key = {r.run: r.ppipp[0] for r in report_rows if r.measure == first}
    order = {m: i for i, m in enumerate(dict.fromkeys(r.measure for r in report_rows))}
    return sorted(report_rows, key=lambda r: (-key.get(r.run, -math.inf), r.run, order[r.measure]))


def estimate_from_values(
    llm: TopicValues,
    human: TopicValues,
    *,
    confidence: float = 0.95,
    mode: str = "finite",
    pairs: bool = False,
    simultaneous: bool = False,
) -> EstimateReport:
    """The report from per-topic values: ``llm`` over all topics, ``human`` over the judged ones
    (the same runs in the same order, the same measures). ``simultaneous``: each measure's pair
    intervals at ``1 - (1 - confidence) / pairs`` (Bonferroni), so that all hold at once."""
    one_of("mode", mode, MODES)
    check_sizes(len(human.topics), len(llm.topics), confidence)
    where = {t: i for i, t in enumerate(llm.topics)}
    judged = [where[t] for t in human.topics]
    unjudged = [i for i in range(len(llm.topics)) if i not in set(judged)]
    rows: list[Row] = []
    pair_rows: list[Row] | None = [] if pairs else None
    names = llm.runs
    for m, yhat_all in llm.values.items():
        y = human.values[m]
        yhat = yhat_all[:, judged]
        rest = yhat_all if mode == "finite" else yhat_all[:, unjudged]
        # the measure's range: [0, 1] for every mean measure (wider only if a value says so)
        limits = (min(0.0, y.min(), yhat_all.min()), max(1.0, y.max(), yhat_all.max()))
        rows += _rows(names, m, estimate_means(y, yhat, rest, confidence, mode, limits=limits))
        if pair_rows is not None and len(names) > 1:
            a, b = np.triu_indices(len(names), k=1)
            width = limits[1] - limits[0]
            level = 1 - (1 - confidence) / len(a) if simultaneous else confidence
            est = estimate_means(
                y[a] - y[b], yhat[a] - yhat[b], rest[a] - rest[b], level, mode, limits=(-width, width)
            )
            pair_rows += _rows([f"{names[i]}\t{names[j]}" for i, j in zip(a, b, strict=True)], m, est)
    first = next(iter(llm.values))
    return EstimateReport(
        _ordered(rows, first),
        pair_rows,
        len(judged),
        len(llm.topics),
        confidence,
        mode,
        list(human.topics),
        simultaneous=simultaneous,
    )


def check_options(
    measures: Iterable[str | Measure] | str, level: int, confidence: float, mode: str, name_from: str
):
    """Every option of :func:`estimate`, before any file is read."""
    if not 0 < confidence < 1:
        raise UserError(f"confidence: {confidence} is not between 0 and 1 (exclusive)")
    one_of("mode", mode, MODES)
    one_of("name_from", name_from, NAME_FROM)
    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        raise UserError(f"level: {level!r} is not a relevance level (trec_eval -l: a whole number >= 1)")
    ms = as_measures(measures)
    for m in ms:
        if m.needs_items or m.aggregate != "mean":
            raise UserError(
                f"measures: {m.label} is not a mean over topics; estimates need one (nDCG@10, AP, P@10, ...)"
            )
    return ms


def estimate(
    runs: RunsLike,
    llm_qrels: Qrels | QrelsResult | str | Path,
    human_qrels: Qrels | QrelsResult | str | Path,
    measures: Iterable[str | Measure] | str,
    *,
    level: int = 1,
    confidence: float = 0.95,
    mode: str = "finite",
    pairs: bool = False,
    simultaneous: bool = False,
    name_from: str = "tag",
    queries: Queries = None,
) -> EstimateReport:
    """Prediction-powered estimates of each run's all-topic mean on human labels.

    ``llm_qrels`` label every topic (the topics are those it holds, or the selected ``queries``);
    ``human_qrels`` label a uniform random sample of them (every pooled passage of a judged
    topic). Per run and measure the report holds the LLM-only mean, the human-only mean and the
    PPI and PPI++ estimates with ``confidence`` intervals (``mode``: ``finite``, the default, or
    ``ppi_py``, see :mod:`rubric.evaluate.ppi`); ``pairs`` adds every pair's difference, with
    intervals each on its own or (``simultaneous``) holding for all pairs of a measure at once.

    Rules: a run that ranks nothing for a topic scores 0 on it (trec_eval ``-c``); human
    judgments of a topic without LLM labels are an error, as are fewer than 2 judged topics.

    >>> report = estimate(["runs/"], "llm.qrels", "nist.qrels", ["nDCG@10"], level=2)  # doctest: +SKIP
    >>> print(report.render("tsv"))  # doctest: +SKIP
    """
    ms = check_options(measures, level, confidence, mode, name_from)
    chosen = QuerySelection.of(queries)
    llm_where = "the LLM qrels" if not isinstance(llm_qrels, str | Path) else str(llm_qrels)
    human_where = "the human qrels" if not isinstance(human_qrels, str | Path) else str(human_qrels)
    llm_loaded = {q: d for q, d in load_qrels(llm_qrels).items() if d}
    absent = chosen.check_present(llm_loaded, llm_where)
    llm = chosen.restrict(llm_loaded)
    human = chosen.restrict({q: d for q, d in load_qrels(human_qrels).items() if d})
    orphans = sorted(set(human) - set(llm))
    if orphans:
        raise UserError(
            f"{human_where}: human judgments for {len(orphans)} topic(s) without LLM labels: "
            f"{', '.join(orphans[:10])} (every judged topic must be among the estimated topics)"
        )
    topics = sorted(llm)
    check_sizes(len(human), len(topics), confidence)
    # runs are read once (only these topics kept, in parallel) and scored against both label sets
    run_list = load_run_columns(runs, queries=topics, name_from=name_from)
    if not run_list:
        raise UserError("runs: no run given")
    llm_values = topic_values(
        Evaluator(llm, ms, TrecEvalSettings(level=level, complete=True)), run_list, topics
    )
    human_values = topic_values(
        Evaluator(human, ms, TrecEvalSettings(level=level, complete=True)), run_list, sorted(human)
    )
    report = estimate_from_values(
        llm_values, human_values, confidence=confidence, mode=mode, pairs=pairs, simultaneous=simultaneous
    )
    notes = [absent_note(absent, llm_where, "selected"), unranked_note(llm_values.results, complete=True)]
    report.notes = [n for n in notes if n]
    return report


def graded_labels(
    graded: str | Path,
    grades: GradeFilter,
    label: str,
    min_grade: int,
    queries: Queries = None,
    *,
    reviews: bool = True,
) -> tuple[Qrels, Qrels]:
    """LLM qrels and human qrels from one graded file: the selected grades labelled by the rule,
    and, for the topics with any HumanReview grade (`rubric verify apply`), the same labels with
    the reviewers' grades in place of the LLM's where they graded (as `evaluate qrels --prefer
    HumanReview`); cells a reviewer left alone keep the LLM's grade, so review every passage of
    a sampled topic. ``reviews=False`` (human labels from elsewhere): no human qrels are read,
    so a file without reviews serves as well."""
    from rubric.data.labels import LabelRule
    from rubric.evaluate.qrels import build_qrels

    rule = LabelRule.parse(label, min_grade)
    llm = build_qrels(graded, selection=grades, rule=rule, queries=queries).to_dict()
    if not reviews:
        return llm, {}
    try:
        reviewed = build_qrels(
            graded,
            selection=GradeFilter(HUMAN_PROMPT_CLASS, None, grades.prompt_type),
            rule=rule,
            queries=queries,
        ).to_dict()
    except UserError as e:
        if "no grades match" not in str(e):
            raise
        return llm, {}
    preferred = build_qrels(
        graded, selection=grades, rule=rule, queries=queries, prefer=HUMAN_PROMPT_CLASS
    ).to_dict()
    human = {q: docs for q, docs in preferred.items() if reviewed.get(q)}
    return llm, human


def estimate_output(
    runs: RunsLike,
    measures: list[str],
    *,
    llm_qrels: str | Path | None = None,
    human_qrels: str | Path | None = None,
    graded: str | Path | None = None,
    grades: GradeFilter | None = None,
    label: str = "max",
    min_grade: int = 1,
    level: int = 1,
    confidence: float = 0.95,
    mode: str = "finite",
    pairs: bool = False,
    simultaneous: bool = False,
    fmt: str = "tsv",
    digits: int = 4,
    name_from: str = "tag",
    queries: Queries = None,
) -> tuple[Rendered, EstimateReport]:
    """``rubric evaluate estimate``: the report in ``fmt`` with its stderr lines, and the report
    (for ``--plot``). LLM labels come from ``llm_qrels`` or from ``graded`` (its ``grades``
    labelled by ``label``/``min_grade``); human ones from ``human_qrels``, else from the
    HumanReview grades of ``graded`` (:func:`graded_labels`). Every option is checked before any
    file is read (``queries`` may be a function that reads them, called after the checks); the
    caller checks a figure's path (:func:`rubric.plots.check_plot`) first, as `evaluate meta` does."""
    check_format(fmt, FORMATS)
    check_options(measures, level, confidence, mode, name_from)
    if simultaneous and not pairs:
        raise UserError(
            "{simultaneous}: applies to the pairs' intervals; add {pairs}", "simultaneous", "pairs"
        )
    if (llm_qrels is None) == (graded is None):
        raise UserError("{llm_qrels} / {graded}: give the LLM labels as one of them", "llm_qrels", "graded")
    if human_qrels is None and graded is None:
        raise UserError(
            "{human_qrels}: the human judgments are needed (a qrels file), "
            "or {graded} with HumanReview grades",
            "human_qrels",
            "graded",
        )
    grades = grades or GradeFilter()
    if graded is not None:
        from rubric.data.labels import LabelRule

        grades.check()
        LabelRule.parse(label, min_grade)
    chosen = QuerySelection.of(queries)
    llm: Qrels | str | Path
    human: Qrels | str | Path
    if graded is not None:
        llm, from_reviews = graded_labels(
            graded, grades, label, min_grade, chosen, reviews=human_qrels is None
        )
        human = human_qrels if human_qrels is not None else from_reviews
        if human_qrels is None and not from_reviews:
            raise UserError(
                f"{graded}: no HumanReview grades (`rubric verify apply` writes them); "
                "or give {human_qrels}",
                "human_qrels",
            )
    else:
        assert llm_qrels is not None and human_qrels is not None
        llm, human = llm_qrels, human_qrels
    report = estimate(
        runs,
        llm,
        human,
        measures,
        level=level,
        confidence=confidence,
        mode=mode,
        pairs=pairs,
        simultaneous=simultaneous,
        name_from=name_from,
        queries=chosen,
    )
    notes = [*report.header_notes(), *report.notes]
    if report.pairs is not None:
        notes.append(report.pairs_note())
    return Rendered(report.render(fmt, digits), notes), report
