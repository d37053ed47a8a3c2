"""Meta-evaluation: does an (automatic) evaluation order runs and topics like a reference one?

"The Great Nugget Recall" (TREC 2024 RAG, §5.2) computes Kendall's tau three ways, and so do we:

1. **run level**: each run's score is its mean over topics (the table's ``all`` row where it
   covers exactly the topics both sides have), then tau-b between the two orderings of runs.
   This is :func:`rubric.evaluate.correlation.correlate` on those means, Spearman's rho too:
   average ranks for ties, scores rounded to ``digits`` decimals first (4 = as trec_eval prints
   them; ``None`` = full precision; both sides are rounded, a reference of ranks is not).
2. **per-topic average**: tau-b between the runs' scores on one topic, averaged over topics. A
   topic where either side gives fewer than 2 distinct values has no tau; it is left out and
   named in the notes.
3. **all topic/run pairs**: tau-b over every (run, topic) pair as one observation.

Only (run, topic) pairs scored on both sides count. Confidence intervals come from a bootstrap
over topics (percentile intervals of ``resamples`` resamples, seeded): every statistic is
recomputed on topics drawn with replacement, run means included, so the intervals show how much
the agreement depends on the topic sample. A reference that only ranks runs (an official
leaderboard) gives the run-level numbers only.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rubric.data.files import write_output
from rubric.data.query_selection import Queries, QuerySelection
from rubric.data.table import check_format, latex_escape
from rubric.errors import UserError, expected
from rubric.evaluate.report import FORMATS, Report, _fmt
from rubric.evaluate.score_tables import UNNAMED, ScoreTable

if TYPE_CHECKING:
    from rubric.evaluate.assignment_agreement import AssignmentConfusion


@dataclass
class Paired:
    """The two sides' values of one measure on the (run, topic) pairs both have."""

    x: dict[str, dict[str, float]]  # run -> topic -> value (the evaluation)
    y: dict[str, dict[str, float]]  # run -> topic -> value (the reference)
    x_runs: dict[str, float]  # run -> run-level score
    y_runs: dict[str, float]  # run -> run-level score (or rank when y_are_ranks)
    y_are_ranks: bool = False

    @property
    def runs(self) -> list[str]:
        return sorted(set(self.x_runs) & set(self.y_runs))

    @property
    def topics(self) -> list[str]:
        return sorted({t for run in self.x.values() for t in run})

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(r, t) for r in sorted(self.x) for t in sorted(self.x[r])]


@dataclass
class TopicTau:
    """One topic's agreement between the two orderings of runs (nan when undefined)."""

    topic: str
    runs: int
    kendall: float
    spearman: float


@dataclass
class MetaRow:
    """The agreement of one evaluation (condition, measure) with the reference."""

    condition: str
    measure: str
    reference_measure: str
    runs: int
    topics: int
    pairs: int
    tau_run: float
    rho_run: float
    tau_topic_avg: float
    tau_pairs: float
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    per_topic: list[TopicTau] = field(default_factory=list)
    skipped_topics: list[str] = field(default_factory=list)
    paired: Paired | None = None  # the values behind the numbers (for plots)

    @property
    def topics_used(self) -> int:
        return self.topics - len(self.skipped_topics)


STATISTICS = ("tau_run", "tau_topic_avg", "tau_pairs")


def _round(value: float, digits: int | None) -> float:
    return value if digits is None else float(f"{value:.{digits}f}")


def _tau_b(a: list[float], b: list[float]) -> float:
    from scipy.stats import kendalltau

    with warnings.catch_warnings():  # constant input: nan, which callers handle
        warnings.simplefilter("ignore")
        return float(kendalltau(a, b).statistic)


def _rho(a: list[float], b: list[float]) -> float:
    from scipy.stats import spearmanr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(spearmanr(a, b).statistic)


def pair_values(
    x: ScoreTable,
    y: ScoreTable,
    measure: str,
    *,
    reference_measure: str,
    digits: int | None = 4,
    queries: QuerySelection | Iterable[str] | None = None,
) -> tuple[Paired, list[str]]:
    """The values of ``measure`` (x) and ``reference_measure`` (y) on common (run, topic) pairs,
    rounded to ``digits``, with notes on what was left out."""
    chosen = QuerySelection.of(queries)
    notes: list[str] = []
    xq = {r: chosen.restrict(v) for r, v in x.per_query.get(measure, {}).items()}
    if not any(xq.values()):
        raise UserError(
            f"{x.source}: no per-query scores for {measure}; an evaluation needs them (write it with -q), "
            "only the reference (-R) may be a run-level leaderboard"
        )
    y_topics = y.has_topics(reference_measure)
    if not y_topics:
        y_runs_raw = y.summary.get(reference_measure, {})
        xr = {r: v for r, v in xq.items() if v and r in y_runs_raw}
        x_runs = {r: _run_score(x, measure, r, xr[r], digits) for r in xr}
        y_runs = {r: (s if y.are_ranks else _round(s, digits)) for r, s in y_runs_raw.items() if r in xr}
        paired = Paired(
            {r: {t: _round(v, digits) for t, v in xr[r].items()} for r in xr}, {}, x_runs, y_runs, y.are_ranks
        )
        return paired, _run_notes(x, y, set(xq), set(y_runs_raw), reference_measure)
    yq = {r: chosen.restrict(v) for r, v in y.per_query[reference_measure].items()}
    px: dict[str, dict[str, float]] = {}
    py: dict[str, dict[str, float]] = {}
    for run in sorted(set(xq) & set(yq)):
        common = sorted(set(xq[run]) & set(yq[run]))
        if common:
            px[run] = {t: _round(xq[run][t], digits) for t in common}
            py[run] = {t: _round(yq[run][t], digits) for t in common}
    if not px:
        raise UserError(f"{x.source} and {y.source}: no (run, topic) pair is scored on both sides")
    x_runs = {r: _run_score(x, measure, r, px[r], digits) for r in px}
    y_runs = {r: _run_score(y, reference_measure, r, py[r], digits) for r in py}
    notes += _run_notes(x, y, set(xq), set(yq), reference_measure)
    only = _one_sided_pairs(xq, yq, px)
    if only:
        notes.append(
            f"{measure}: {only} (run, topic) pairs are scored on one side only and left out "
            "(run means are taken over the topics both sides score)"
        )
    return Paired(px, py, x_runs, y_runs), notes


def _run_score(
    table: ScoreTable, measure: str, run: str, used: dict[str, float], digits: int | None
) -> float:
    """The table's own summary when its per-query values of the run are exactly ``used``'s topics
    (so it equals what the tool printed), else the mean over ``used``."""
    own = table.per_query.get(measure, {}).get(run, {})
    summary = table.summary.get(measure, {}).get(run)
    if summary is not None and set(own) == set(used):
        return _round(summary, digits)
    return _round(sum(used.values()) / len(used), digits)


def _run_notes(x: ScoreTable, y: ScoreTable, x_runs: set[str], y_runs: set[str], measure: str) -> list[str]:
    notes = []
    if x_runs - y_runs:
        notes.append(f"runs not in {y.source} ({measure}), left out: {', '.join(sorted(x_runs - y_runs))}")
    if y_runs - x_runs:
        notes.append(f"runs of {y.source} not in {x.source}, left out: {', '.join(sorted(y_runs - x_runs))}")
    return notes


def _one_sided_pairs(xq: dict, yq: dict, kept: dict) -> int:
    both = {(r, t) for r in kept for t in kept[r]}
    every = {(r, t) for side in (xq, yq) for r, ts in side.items() for t in ts if r in xq and r in yq}
    return len(every - both)


def per_topic(paired: Paired) -> list[TopicTau]:
    """Kendall's tau-b and Spearman's rho of the runs' scores on each topic."""
    by_topic: dict[str, list[tuple[float, float]]] = {}
    for run in paired.x:
        for t, v in paired.x[run].items():
            by_topic.setdefault(t, []).append((v, paired.y[run][t]))
    out = []
    for t in sorted(by_topic):
        xs, ys = zip(*by_topic[t], strict=True)
        if len(set(xs)) < 2 or len(set(ys)) < 2:
            out.append(TopicTau(t, len(xs), math.nan, math.nan))
        else:
            out.append(TopicTau(t, len(xs), _tau_b(list(xs), list(ys)), _rho(list(xs), list(ys))))
    return out


def _mean(values: Iterable[float]) -> float:
    kept = [v for v in values if v == v]
    return sum(kept) / len(kept) if kept else math.nan


def agreement(
    condition: str,
    measure: str,
    reference_measure: str,
    *,
    paired: Paired,
    digits: int | None = 4,
    resamples: int = 1000,
    seed: int = 42,
    confidence: float = 0.95,
) -> MetaRow:
    """The three taus (and the run-level rho) of one paired measure, with bootstrap intervals."""
    from rubric.evaluate.correlation import Official, correlate

    runs = paired.runs
    if len(runs) < 3:
        raise UserError(f"{condition} ({measure}): only {len(runs)} runs are scored on both sides (need 3)")
    run_level = correlate(
        {r: paired.x_runs[r] for r in runs},
        Official({r: paired.y_runs[r] for r in runs}, are_ranks=paired.y_are_ranks),
        digits,
    )
    row = MetaRow(
        condition,
        measure,
        reference_measure,
        runs=len(runs),
        topics=len(paired.topics) if paired.y else 0,  # a run-level reference has no topics
        pairs=len(paired.pairs) if paired.y else 0,
        tau_run=run_level.kendall,
        rho_run=run_level.spearman,
        tau_topic_avg=math.nan,
        tau_pairs=math.nan,
        paired=paired,
    )
    if paired.y:  # the reference has topics
        row.per_topic = per_topic(paired)
        row.skipped_topics = [t.topic for t in row.per_topic if t.kendall != t.kendall]
        row.tau_topic_avg = _mean(t.kendall for t in row.per_topic)
        pairs = paired.pairs
        row.tau_pairs = _tau_b([paired.x[r][t] for r, t in pairs], [paired.y[r][t] for r, t in pairs])
        if resamples > 0:
            row.intervals = bootstrap(
                paired, row.per_topic, digits, resamples=resamples, seed=seed, confidence=confidence
            )
    return row


def bootstrap(
    paired: Paired,
    topic_taus: list[TopicTau],
    digits: int | None,
    *,
    resamples: int,
    seed: int,
    confidence: float,
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of the three taus over topics drawn with replacement (seeded)."""
    import numpy as np
    from scipy.stats import kendalltau, rankdata

    runs = sorted(paired.x)
    topics = paired.topics
    col = {t: j for j, t in enumerate(topics)}
    x = np.full((len(runs), len(topics)), np.nan)
    y = np.full((len(runs), len(topics)), np.nan)
    for i, r in enumerate(runs):
        for t, v in paired.x[r].items():
            x[i, col[t]] = v
            y[i, col[t]] = paired.y[r][t]
    tau_t = np.array([t.kendall for t in topic_taus])  # same topic order (sorted)
    rng = np.random.default_rng(seed)
    stats: dict[str, list[float]] = {s: [] for s in STATISTICS}

    def tau(a, b) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(kendalltau(a, b).statistic)

    decimals = digits
    for _ in range(resamples):
        idx = rng.integers(0, len(topics), len(topics))
        xs, ys = x[:, idx], y[:, idx]
        present = ~np.isnan(xs)
        counts = present.sum(axis=1)
        ok = counts > 0
        with np.errstate(invalid="ignore"):
            mx = np.where(present, xs, 0.0).sum(axis=1)[ok] / counts[ok]
            my = np.where(present, ys, 0.0).sum(axis=1)[ok] / counts[ok]
        if decimals is not None:
            mx, my = np.round(mx, decimals), np.round(my, decimals)
        stats["tau_run"].append(tau(rankdata(-mx), rankdata(-my)) if ok.sum() >= 3 else math.nan)
        sample = tau_t[idx]
        sample = sample[~np.isnan(sample)]
        stats["tau_topic_avg"].append(float(sample.mean()) if sample.size else math.nan)
        stats["tau_pairs"].append(tau(xs[present], ys[present]))
    low, high = (1 - confidence) / 2, 1 - (1 - confidence) / 2
    out = {}
    for name, values in stats.items():
        arr = np.array([v for v in values if v == v])
        out[name] = (
            (float(np.quantile(arr, low)), float(np.quantile(arr, high))) if arr.size else (math.nan,) * 2
        )
    return out


# --- the report ------------------------------------------------------------------------------


@dataclass
class MetaReport:
    """Rows of a meta-evaluation: one per (condition, measure), written as TSV, JSON or LaTeX."""

    rows: list[MetaRow]
    reference: str
    confidence: float = 0.95
    notes: list[str] = field(default_factory=list)

    @property
    def has_intervals(self) -> bool:
        return any(r.intervals for r in self.rows)

    def header(self) -> list[str]:
        cols = ["condition", "measure", "reference_measure", "runs", "topics", "pairs", "tau_run", "rho_run"]
        cols += ["tau_topic_avg", "tau_pairs", "topics_skipped"]
        if self.has_intervals:
            cols += [f"{s}_{end}" for s in STATISTICS for end in ("low", "high")]
        return cols

    def values(self, row: MetaRow) -> list[float | int | str]:
        vals: list[float | int | str] = [
            row.condition, row.measure, row.reference_measure, row.runs, row.topics, row.pairs,
            row.tau_run, row.rho_run, row.tau_topic_avg, row.tau_pairs, len(row.skipped_topics),
        ]  # fmt: skip
        if self.has_intervals:
            for s in STATISTICS:
                vals += list(row.intervals.get(s, (math.nan, math.nan)))
        return vals

    def to_tsv(self, digits: int = 4) -> str:
        lines = ["\t".join(self.header())]
        for row in self.rows:
            lines.append(
                "\t".join(_fmt(v, digits) if isinstance(v, float) else str(v) for v in self.values(row))
            )
        return "\n".join(lines) + "\n"

    def to_dict(self) -> list[dict]:
        out = []
        for row in self.rows:
            d = dict(zip(self.header(), self.values(row), strict=True))
            out.append({k: (None if isinstance(v, float) and v != v else v) for k, v in d.items()})
        return out

    def to_json(self) -> str:
        return (
            json.dumps(
                {"reference": self.reference, "confidence": self.confidence, "rows": self.to_dict()}, indent=1
            )
            + "\n"
        )

    def to_latex(self, digits: int = 3) -> str:
        """A booktabs table in the paper's terms: run-level, per-topic average, all pairs."""
        ci = self.has_intervals

        def cell(row: MetaRow, name: str) -> str:
            value = getattr(row, name)
            text = _fmt(value, digits) or "--"
            if ci and name in row.intervals:
                lo, hi = row.intervals[name]
                text += f" {{\\scriptsize [{_fmt(lo, digits)}, {_fmt(hi, digits)}]}}"
            return text

        lines = [
            "\\begin{tabular}{llrrrrrr}",
            "\\toprule",
            "Condition & Measure & Runs & Topics & $\\tau$ run & $\\rho$ run & $\\tau$ per-topic avg "
            "& $\\tau$ all pairs \\\\",
            "\\midrule",
        ]
        for row in self.rows:
            lines.append(
                " & ".join(
                    [
                        latex_escape(row.condition),
                        latex_escape(row.measure),
                        str(row.runs),
                        str(row.topics),
                        cell(row, "tau_run"),
                        _fmt(row.rho_run, digits) or "--",
                        cell(row, "tau_topic_avg"),
                        cell(row, "tau_pairs"),
                    ]
                )
                + " \\\\"
            )
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"

    def render(self, fmt: str, digits: int = 4) -> str:
        if fmt == "json":
            return self.to_json()
        if fmt == "latex":
            return self.to_latex(min(digits, 3))
        return self.to_tsv(digits)

    def per_topic_tsv(self, digits: int = 4) -> str:
        """Each topic's Spearman and Kendall between the two orderings of runs (the original
        tool's per-query leaderboard analysis), and the run-level row as query ``all``."""
        lines = ["condition\tmeasure\tquery\truns\tspearman\tkendall"]
        for row in self.rows:
            for t in row.per_topic:
                lines.append(
                    f"{row.condition}\t{row.measure}\t{t.topic}\t{t.runs}\t{_fmt(t.spearman, digits)}\t"
                    f"{_fmt(t.kendall, digits)}"
                )
            lines.append(
                f"{row.condition}\t{row.measure}\tall\t{row.runs}\t{_fmt(row.rho_run, digits)}\t"
                f"{_fmt(row.tau_run, digits)}"
            )
        return "\n".join(lines) + "\n"

    def write_per_topic(self, path: str | Path) -> str:
        """Write :meth:`per_topic_tsv` to ``path`` (atomically; ``-`` is stdout); the line saying so."""
        write_output(path, self.per_topic_tsv())
        return f"wrote {path}"

    def scatter_tsv(self, digits: int = 6) -> str:
        """The points of the scatter figure (``--plot``) as a table: every (run, topic) pair both
        sides scored, then each run's scores as query ``all`` (the reference's rank when it is a
        ranking), so the figure can be redrawn or inspected with any tool."""
        lines = ["condition\tmeasure\treference_measure\trun\tquery\tevaluation\treference"]
        for row in self.rows:
            paired = row.paired
            if paired is None:
                continue
            head = f"{row.condition}\t{row.measure}\t{row.reference_measure}"
            for run, topic in paired.pairs:
                if topic in paired.y.get(run, {}):
                    x, y = paired.x[run][topic], paired.y[run][topic]
                    lines.append(f"{head}\t{run}\t{topic}\t{_fmt(x, digits)}\t{_fmt(y, digits)}")
            for run in paired.runs:
                x, y = paired.x_runs[run], paired.y_runs[run]
                lines.append(f"{head}\t{run}\tall\t{_fmt(x, digits)}\t{_fmt(y, digits)}")
        return "\n".join(lines) + "\n"

    def write_scatter(self, path: str | Path) -> str:
        """Write :meth:`scatter_tsv` to ``path`` (atomically; ``-`` is stdout); the line saying so."""
        write_output(path, self.scatter_tsv())
        return f"wrote {path}"


def _holds(table: ScoreTable, measure: str) -> bool:
    try:
        table.resolve(measure)
    except UserError:
        return False
    return True


TableLike = ScoreTable | Report | str | Path
"""A side of a meta-evaluation: a table read already, a :class:`Report` (``rubric.leaderboard``'s)
or score files (:func:`~rubric.evaluate.score_tables.read_score_table`)."""


def as_score_table(table: object, source: str, parameter: str) -> ScoreTable:
    """A :data:`TableLike` as a :class:`ScoreTable`; anything else is a one-line error naming
    ``parameter``. A report's scores are its summaries, its per-query values its topics."""
    if isinstance(table, ScoreTable):
        return table
    if isinstance(table, Report):
        out = ScoreTable(source)
        for s in table.scores:
            out.summary.setdefault(s.measure, {})[s.run] = s.value
            if s.per_query:
                out.per_query.setdefault(s.measure, {})[s.run] = dict(s.per_query)
        return out
    if isinstance(table, str | os.PathLike):
        from rubric.evaluate.score_tables import read_score_table

        return read_score_table(Path(table), source=source)
    raise expected(parameter, "a Report, a ScoreTable or a score file", table)


def meta_evaluate(
    conditions: Sequence[tuple[str, TableLike]],
    reference: TableLike,
    *,
    measures: list[str] | None = None,
    reference_measure: str | None = None,
    digits: int | None = 4,
    resamples: int = 1000,
    seed: int = 42,
    confidence: float = 0.95,
    queries: QuerySelection | Iterable[str] | None = None,
) -> MetaReport:
    """Agreement of every (condition, measure) with the reference, as one report.

    ``measures`` default to those every condition and the reference have (every measure of the
    conditions when the reference is one unnamed score per run, e.g. an official leaderboard);
    ``reference_measure`` pins the reference's measure for all rows (default: the same name).
    A named measure that a condition lacks gives no row for it (noted); one no table has is an
    error. Each table is a :class:`Report` (``rubric.leaderboard``'s), a score file or a
    :class:`ScoreTable`.
    """
    return _meta_evaluate(
        [(name, as_score_table(t, name, "conditions")) for name, t in conditions],
        as_score_table(reference, "reference", "reference"),
        measures=measures,
        reference_measure=reference_measure,
        digits=digits,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        queries=queries,
    )


def _meta_evaluate(
    conditions: list[tuple[str, ScoreTable]],
    reference: ScoreTable,
    *,
    measures: list[str] | None,
    reference_measure: str | None,
    digits: int | None,
    resamples: int,
    seed: int,
    confidence: float,
    queries: QuerySelection | Iterable[str] | None,
) -> MetaReport:
    if not 0 < confidence < 1:
        raise UserError(f"{{confidence}}: expected a number between 0 and 1, got {confidence}", "confidence")
    if resamples < 0:
        raise UserError(f"{{resamples}}: expected 0 (no intervals) or more, got {resamples}", "resamples")
    if reference_measure:
        fixed: str | None = reference.resolve(reference_measure)
    elif reference.only_measure() == UNNAMED:  # run<TAB>score or {"run": rank}: one unnamed score
        fixed = UNNAMED
    else:
        fixed = None  # the measure of the same name
    if measures:
        wanted = list(dict.fromkeys(measures))
    else:
        tables = [t for _, t in conditions] + ([] if fixed else [reference])
        wanted = [m for m in conditions[0][1].measures if all(_holds(t, m) for t in tables)]
        if not wanted:
            raise UserError(
                f"no measure is in every table and in {reference.source}; name them with -m "
                f"(the reference holds {', '.join(reference.measures)})"
            )
    rows: list[MetaRow] = []
    notes: list[str] = []
    for m in wanted:
        if not any(_holds(t, m) for _, t in conditions):
            conditions[0][1].resolve(m)  # the error that lists what the tables hold
    for name, table in conditions:
        for m in wanted:
            if not _holds(table, m):
                notes.append(f"{name}: no {m} scores; no row for it")
                continue
            mx = table.resolve(m)
            my = fixed or reference.resolve(m)
            paired, row_notes = pair_values(
                table, reference, mx, reference_measure=my, digits=digits, queries=queries
            )
            notes += [f"{name}: {n}" for n in row_notes]
            row = agreement(
                name,
                mx,
                my,
                paired=paired,
                digits=digits,
                resamples=resamples,
                seed=seed,
                confidence=confidence,
            )
            if row.skipped_topics:
                notes.append(
                    f"{name} ({mx}): {len(row.skipped_topics)} of {row.topics} topics have fewer than 2 "
                    f"distinct values on a side and no tau; left out of the per-topic average: "
                    + ", ".join(row.skipped_topics[:20])
                    + (" ..." if len(row.skipped_topics) > 20 else "")
                )
            rows.append(row)
    return MetaReport(rows, reference.source, confidence, list(dict.fromkeys(notes)))


def meta_output(
    evaluations: Sequence[str],
    *,
    reference: Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    reference_measure: str | None = None,
    digits: int = 4,
    resamples: int = 1000,
    seed: int = 42,
    confidence: float = 0.95,
    fmt: str = "tsv",
    confusion: bool = False,
    per_topic: str | Path | None = None,
    label_runs: bool = False,
    queries: Queries = None,
) -> MetaReport | AssignmentConfusion:
    """``rubric evaluate meta``: the agreement of the ``evaluations`` (``NAME=PATH`` score tables)
    with the ``reference`` (:func:`meta_evaluate`; ``digits`` < 0: full precision), or with
    ``confusion`` the matrix of two ASSIGNED files
    (:func:`~rubric.evaluate.assignment_agreement.confusion_output`). Both render in ``fmt`` and
    carry their notes; every option is checked before any file is read."""
    from rubric.evaluate.assignment_agreement import confusion_output
    from rubric.evaluate.score_tables import read_conditions, read_reference

    check_format(fmt, FORMATS)
    if confusion:
        return confusion_output(
            evaluations,
            reference=reference,
            measures=measures,
            per_topic=per_topic,
            label_runs=label_runs,
            queries=queries,
        )
    if not reference:
        raise UserError(
            "{reference}: give the reference evaluation (or use {confusion})", "reference", "confusion"
        )
    chosen = QuerySelection.of(queries)
    ref = read_reference(list(reference))
    conditions = read_conditions(evaluations)
    rounding = None if digits < 0 else digits
    return meta_evaluate(
        conditions,
        ref,
        measures=list(measures) if measures else None,
        reference_measure=reference_measure,
        digits=rounding,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        queries=chosen,
    )
