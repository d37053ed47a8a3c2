"""Leaderboard correlation: does our ranking of runs agree with the official one?

RUBRIC (ICTIR'24, section 6.2): Spearman's rho and Kendall's tau-b between the ranks of the runs
by our scores and the official ranks; tied runs get the average rank (scipy ``rankdata``). The
original tool ranked runs by the scores as trec_eval prints them (4 decimals), so runs equal at
that precision tie; its published correlations are reproduced only when scores are rounded the
same way before ranking, hence ``digits=4`` by default (``None`` ranks the full-precision scores).

:func:`sweep` runs the grid of the original's ``*-leaderboard-analysis-graded.correlation.tsv``
(qrels files x relevance levels x measures) reading each run once and each qrels once.
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.files import read_text, text_lines
from rubric.data.trec import Run, read_qrels, read_runs
from rubric.errors import UserError
from rubric.evaluate.measures import parse_measures
from rubric.evaluate.treceval import Evaluator


@dataclass
class Official:
    """The official leaderboard: ranks (lower is better) or scores (higher is better)."""

    values: dict[str, float]
    are_ranks: bool
    source: str = "official"

    def ranks(self, runs: list[str]) -> list[float]:
        from scipy.stats import rankdata

        vals = [self.values[r] for r in runs]
        return list(rankdata(vals if self.are_ranks else [-v for v in vals], method="average"))


@dataclass
class Correlation:
    spearman: float
    kendall: float
    runs: list[str]
    only_ours: list[str] = field(default_factory=list)
    only_official: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.runs)


def read_official(path: str | Path, measure: str | None = None) -> Official:
    """``{"run": rank}`` JSON, or a TSV of scores: ``run<TAB>score``, a leaderboard TSV of ours
    (``run measure value ...``, the given measure), or any TSV with a ``run`` column and a
    column named after the measure (``ndcg_cut.10`` also finds ``ndcg_cut_10``)."""
    text = read_text(path)
    if text.lstrip().startswith("{"):
        try:
            pairs = json.loads(text, object_pairs_hook=list)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
        data: dict[str, float] = {}
        for run, rank in pairs:
            if not isinstance(rank, (int, float)) or isinstance(rank, bool) or not math.isfinite(rank):
                raise UserError(f'{path}: expected {{"run": rank}} with numbers, found {rank!r} for {run}')
            if run in data:
                raise UserError(f"{path}: run {run!r} is listed twice")
            data[run] = float(rank)
        return Official(data, are_ranks=True, source=str(path))
    return Official(read_scores(path, measure, text=text), are_ranks=False, source=str(path))


def read_scores(path: str | Path, measure: str | None = None, text: str | None = None) -> dict[str, float]:
    """Scores per run from a leaderboard TSV (see :func:`read_official`)."""
    text = read_text(path) if text is None else text
    reader = csv.reader((line for _, line in text_lines(text)), delimiter="\t")
    try:
        rows = [r for r in reader if r and not r[0].startswith("#")]
    except csv.Error as e:
        raise UserError(f"{path}:{reader.line_num}: not a TSV line ({e})") from None
    if not rows:
        raise UserError(f"{path}: no rows")
    header = rows[0]
    scores: dict[str, float] = {}

    def put(line_no: int, run: str, value: str) -> None:
        try:
            number = float(value)
        except ValueError:
            raise UserError(f"{path}:{line_no}: score must be a number, found {value!r}") from None
        if not math.isfinite(number):
            raise UserError(f"{path}:{line_no}: score must be a finite number, found {value!r}")
        if run in scores:
            raise UserError(f"{path}:{line_no}: run {run!r} is listed twice")
        scores[run] = number

    if {"run", "measure", "value"} <= set(header):
        i_run, i_measure, i_value = header.index("run"), header.index("measure"), header.index("value")
        measures = list(dict.fromkeys(r[i_measure] for r in rows[1:] if len(r) > i_measure))
        wanted = measure or (measures[0] if measures else None)
        if wanted not in measures:
            raise UserError(f"{path}: no rows for measure {wanted!r}; it holds {', '.join(measures)}")
        i_query = header.index("query") if "query" in header else None  # per-query TSV: 'all' rows
        for line_no, r in enumerate(rows[1:], start=2):
            if len(r) > i_value and r[i_measure] == wanted and (i_query is None or r[i_query] == "all"):
                put(line_no, r[i_run], r[i_value])
        return scores
    if "run" in header and len(header) > 2:
        names = [measure, measure.replace(".", "_")] if measure else []
        column = next((header.index(n) for n in names if n in header), None)
        if column is None:
            raise UserError(
                f"{path}: name the score column with --official-measure; columns: {', '.join(header)}"
            )
        for line_no, r in enumerate(rows[1:], start=2):
            put(line_no, r[header.index("run")], r[column])
        return scores
    start = 1 if len(header) >= 2 and not _is_number(header[1]) else 0
    for line_no, r in enumerate(rows[start:], start=start + 1):
        if len(r) < 2:
            raise UserError(f"{path}:{line_no}: expected run<TAB>score")
        put(line_no, r[0], r[1])
    return scores


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def correlate(ours: dict[str, float], official: Official, digits: int | None = 4) -> Correlation:
    """Spearman and Kendall tau-b between our ranking (scores rounded to ``digits``) and the official."""
    from scipy.stats import kendalltau, rankdata, spearmanr

    runs = sorted(set(ours) & set(official.values))
    only_ours = sorted(set(ours) - set(official.values))
    only_official = sorted(set(official.values) - set(ours))
    if len(runs) < 3:
        raise UserError(
            f"{official.source}: only {len(runs)} runs are on both leaderboards (need 3); "
            f"ours only: {', '.join(only_ours[:10]) or '-'}; "
            f"official only: {', '.join(only_official[:10]) or '-'}"
        )
    scores = [ours[r] if digits is None else float(f"{ours[r]:.{digits}f}") for r in runs]
    predicted = rankdata([-s for s in scores], method="average")
    truth = official.ranks(runs)
    with warnings.catch_warnings():  # all runs tied: NaN, as the original tool reports it
        warnings.simplefilter("ignore")
        rho = float(spearmanr(predicted, truth).statistic)
        tau = float(kendalltau(predicted, truth).statistic)
    return Correlation(rho, tau, runs, only_ours, only_official)


# --- the sweep ---------------------------------------------------------------------------------

_SWEEP_RUNS: list[Run] = []


def _sweep_cell(job: tuple) -> dict[tuple[str, int], dict[str, float]]:
    """All levels of one qrels file: ``{(measure, level): {run: score}}``."""
    qrels, ms, levels, complete = job
    out: dict[tuple[str, int], dict[str, float]] = {}
    for level in levels:
        evaluator = Evaluator(qrels, ms, level=level, complete=complete)
        results = [evaluator.evaluate(r.scores, r.name) for r in _SWEEP_RUNS]
        for m in ms:
            out[(m.label, level)] = {res.run: res.summary(m) for res in results}
    return out


def _map_forked(fn, jobs: list) -> list:
    """``map`` over processes forked from this one (2 cores halve a sweep), in order."""
    import multiprocessing
    import os

    workers = min(os.cpu_count() or 1, len(jobs))
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(j) for j in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(fn, jobs))


@dataclass
class SweepRow:
    method: str
    min_rating: int
    measure: str
    spearman: float
    kendall: float


def sweep(
    qrels_paths: list[Path],
    runs: list[Run] | list[Path],
    official: Official,
    measures: list[str],
    levels: list[int],
    digits: int | None = 4,
    complete: bool = False,
) -> tuple[list[SweepRow], Correlation]:
    """Correlations for every qrels file x level x measure (rows ordered measure, qrels, level).

    Returns the rows and the correlation bookkeeping of the first cell (which runs were left out).
    """
    ms = parse_measures(measures)
    qrels_all = {p: read_qrels(p) for p in qrels_paths}
    if runs and not isinstance(runs[0], Run):
        queries = set().union(*(q.keys() for q in qrels_all.values()))
        runs = read_runs(runs, queries=queries)
    ranked = [r for r in runs if r.name in official.values]
    jobs = [(qrels_all[p], ms, levels, complete) for p in qrels_paths]
    global _SWEEP_RUNS
    _SWEEP_RUNS = ranked  # inherited by forked workers: the runs are not pickled per task
    try:
        summaries = _map_forked(_sweep_cell, jobs)
    finally:
        _SWEEP_RUNS = []
    cells: dict[tuple[str, Path, int], Correlation] = {}
    for path, by_cell in zip(qrels_paths, summaries, strict=True):
        for (label, level), ours in by_cell.items():
            cells[(label, path, level)] = correlate(ours, official, digits)
    rows = [
        SweepRow(str(path), level, m.label, c.spearman, c.kendall)
        for m in ms
        for path in qrels_paths
        for level in levels
        for c in [cells[(m.label, path, level)]]
    ]
    first = next(iter(cells.values()))
    first.only_ours = sorted({r.name for r in runs} - set(official.values))
    return rows, first


def sweep_tsv(rows: list[SweepRow], digits: int = 3) -> str:
    lines = ["method\tmin_rating\ttrec_eval_metric\tspearman\tkendall"]
    lines.extend(
        f"{r.method}\t{r.min_rating}\t{r.measure}\t{r.spearman:.{digits}f}\t{r.kendall:.{digits}f}"
        for r in rows
    )
    return "\n".join(lines) + "\n"
