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
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.files import read_text, text_lines
from rubric.data.json_line import load_json
from rubric.data.query_selection import QuerySelection
from rubric.data.run_columns import RunColumns
from rubric.data.trec import (
    NAME_FROM,
    Qrels,
    Run,
    RunSource,
    expand_paths,
    read_qrels,
    run_sources,
)
from rubric.errors import UserError, expected, one_of
from rubric.evaluate.leaderboards import load_run_columns
from rubric.evaluate.measures import parse_measures
from rubric.evaluate.report import Rendered, Report
from rubric.evaluate.score_tables import is_number
from rubric.evaluate.treceval import Evaluator, TrecEvalSettings


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


OfficialLike = Official | Report | Mapping[str, float] | str | Path
ScoresLike = Mapping[str, float] | Report | str | Path


@dataclass
class Correlation:
    spearman: float
    kendall: float
    runs: list[str]
    only_ours: list[str] = field(default_factory=list)
    only_official: list[str] = field(default_factory=list)
    tied: bool = False  # every run has the same (rounded) score: the correlation is undefined (nan)

    @property
    def n(self) -> int:
        return len(self.runs)

    def left_out(self, leaderboard: str | Path) -> list[str]:
        """What did not count: runs on one side only, and a tie of every run (undefined)."""
        lines = []
        if self.only_ours:
            lines.append(f"left out runs not on the official leaderboard: {', '.join(self.only_ours)}")
        if self.only_official:
            lines.append(
                f"left out official runs missing from {leaderboard}: {', '.join(self.only_official)}"
            )
        if self.tied:
            lines.append(f"every run of {leaderboard} has the same score: the correlation is undefined (nan)")
        return lines

    def to_tsv(self) -> str:
        """``runs spearman kendall``, the correlations to four decimals (as every other report)."""
        return f"runs\tspearman\tkendall\n{self.n}\t{self.spearman:.4f}\t{self.kendall:.4f}\n"


def read_official(path: str | Path, measure: str | None = None) -> Official:
    """``{"run": rank}`` JSON, or a TSV of scores: ``run<TAB>score``, a leaderboard TSV of ours
    (``run measure value ...``, the given measure), or any TSV with a ``run`` column and a
    column named after the measure (``ndcg_cut.10`` also finds ``ndcg_cut_10``)."""
    text = read_text(path)
    if text.lstrip().startswith("{"):
        try:
            pairs = load_json(str(path), text, object_pairs_hook=list)
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
    """Scores per run from a leaderboard TSV (see :func:`read_official`): the long form (``run,
    measure, value`` columns), a wide table (a ``run`` column and one column per measure) or
    ``run<TAB>score`` lines."""
    rows = _tsv_rows(path, text)
    header = rows[0]
    if {"run", "measure", "value"} <= set(header):
        cells = _long_cells(path, rows, measure)
    elif "run" in header and len(header) > 2:
        cells = _wide_cells(path, rows, measure)
    else:
        cells = _pair_cells(path, rows)
    scores: dict[str, float] = {}
    for line_no, run, value in cells:  # lazily: a bad line is reported in file order
        try:
            number = float(value)
        except ValueError:
            raise UserError(f"{path}:{line_no}: score must be a number, found {value!r}") from None
        if not math.isfinite(number):
            raise UserError(f"{path}:{line_no}: score must be a finite number, found {value!r}")
        if run in scores:
            raise UserError(f"{path}:{line_no}: run {run!r} is listed twice")
        scores[run] = number
    return scores


def _tsv_rows(path: str | Path, text: str | None) -> list[list[str]]:
    """The rows of a TSV file (or of its ``text``) without comment lines; none is an error."""
    text = read_text(path) if text is None else text
    reader = csv.reader((line for _, line in text_lines(text)), delimiter="\t")
    try:
        rows = [r for r in reader if r and not r[0].startswith("#")]
    except csv.Error as e:
        raise UserError(f"{path}:{reader.line_num}: not a TSV line ({e})") from None
    if not rows:
        raise UserError(f"{path}: no rows")
    return rows


Cells = Iterator[tuple[int, str, str]]
"""(line number, run, score text) of each score a leaderboard TSV holds."""


def _long_cells(path: str | Path, rows: list[list[str]], measure: str | None) -> Cells:
    """The long form: the rows of ``measure`` (default the first measure); of a per-query TSV,
    its ``all`` rows."""
    header = rows[0]
    i_run, i_measure, i_value = header.index("run"), header.index("measure"), header.index("value")
    measures = list(dict.fromkeys(r[i_measure] for r in rows[1:] if len(r) > i_measure))
    wanted = measure or (measures[0] if measures else None)
    if wanted not in measures:
        raise UserError(f"{path}: no rows for measure {wanted!r}; it holds {', '.join(measures)}")
    i_query = header.index("query") if "query" in header else None  # per-query TSV: 'all' rows
    for line_no, r in enumerate(rows[1:], start=2):
        if len(r) > i_value and r[i_measure] == wanted and (i_query is None or r[i_query] == "all"):
            yield line_no, r[i_run], r[i_value]


def _wide_cells(path: str | Path, rows: list[list[str]], measure: str | None) -> Cells:
    """A wide table: the column named ``measure`` (as trec_eval or as it prints it)."""
    header = rows[0]
    names = [measure, measure.replace(".", "_")] if measure else []
    column = next((header.index(n) for n in names if n in header), None)
    if column is None:
        raise UserError(
            f"{path}: name the score column with {{official_measure}}; columns: {', '.join(header)}",
            "official_measure",
        )
    for line_no, r in enumerate(rows[1:], start=2):
        yield line_no, r[header.index("run")], r[column]


def _pair_cells(path: str | Path, rows: list[list[str]]) -> Cells:
    """``run<TAB>score`` lines, after a header line when its second cell is no number."""
    header = rows[0]
    start = 1 if len(header) >= 2 and not is_number(header[1]) else 0
    for line_no, r in enumerate(rows[start:], start=start + 1):
        if len(r) < 2:
            raise UserError(f"{path}:{line_no}: expected run<TAB>score")
        yield line_no, r[0], r[1]


def as_official(official: OfficialLike, measure: str | None = None) -> Official:
    """An official leaderboard from an :class:`Official`, a ``{"run": rank}`` dict (the official
    JSON's form), a :class:`Report` (its scores of ``measure``, default the first) or a file
    (:func:`read_official`)."""
    if isinstance(official, Official):
        return official
    if isinstance(official, Report):
        return Official(official.values(measure), are_ranks=False, source=official.title)
    if isinstance(official, Mapping):
        return Official({str(k): float(v) for k, v in official.items()}, are_ranks=True)
    if not isinstance(official, str | os.PathLike):
        raise expected("official", "a Report, {run: rank} or a leaderboard file", official)
    return read_official(official, measure)


def as_scores(ours: ScoresLike, measure: str | None = None) -> dict[str, float]:
    """Our scores per run from a dict, a :class:`Report` or a leaderboard TSV (``measure``: which
    one; default the first)."""
    if isinstance(ours, Report):
        return ours.values(measure)
    if isinstance(ours, Mapping):
        return {str(k): float(v) for k, v in ours.items()}
    if not isinstance(ours, str | os.PathLike):
        raise expected("ours", "a Report, {run: score} or a leaderboard file", ours)
    return read_scores(ours, measure)


def correlate(
    ours: ScoresLike,
    official: OfficialLike,
    digits: int | None = 4,
    measure: str | None = None,
    official_measure: str | None = None,
) -> Correlation:
    """Spearman and Kendall tau-b between our ranking (scores rounded to ``digits``) and the official.

    ``ours``: ``{run: score}``, a :class:`Report` or our leaderboard TSV (``measure`` picks the
    measure; default the first). ``official``: ``{run: rank}`` (as the official JSON), a JSON or
    TSV file (``official_measure``: its score column; default ``measure``), or an
    :class:`Official`. The defaults are the CLI's (4 decimals, as trec_eval prints them).
    """
    from scipy.stats import kendalltau, rankdata, spearmanr

    scores_of = as_scores(ours, measure)
    off = as_official(official, official_measure or measure)
    runs = sorted(set(scores_of) & set(off.values))
    only_ours = sorted(set(scores_of) - set(off.values))
    only_official = sorted(set(off.values) - set(scores_of))
    if len(runs) < 3:
        raise UserError(
            f"{off.source}: only {len(runs)} runs are on both leaderboards (need 3); "
            f"ours only: {', '.join(only_ours[:10]) or '-'}; "
            f"official only: {', '.join(only_official[:10]) or '-'}"
        )
    scores = [scores_of[r] if digits is None else float(f"{scores_of[r]:.{digits}f}") for r in runs]
    predicted = rankdata([-s for s in scores], method="average")
    truth = off.ranks(runs)
    with warnings.catch_warnings():  # all runs tied: NaN, as the original tool reports it
        warnings.simplefilter("ignore")
        rho = float(spearmanr(predicted, truth).statistic)
        tau = float(kendalltau(predicted, truth).statistic)
    return Correlation(rho, tau, runs, only_ours, only_official, tied=len(set(scores)) == 1)


# --- the sweep ---------------------------------------------------------------------------------

_SWEEP_RUNS: list[Run | RunColumns] = []


def _sweep_cell(job: tuple) -> dict[tuple[str, int], dict[str, float]]:
    """All levels of one qrels file: ``{(measure, level): {run: score}}``."""
    qrels, ms, levels, complete = job
    out: dict[tuple[str, int], dict[str, float]] = {}
    for level in levels:
        evaluator = Evaluator(qrels, ms, TrecEvalSettings(level=level, complete=complete))
        results = [
            evaluator.evaluate(r) if isinstance(r, RunColumns) else evaluator.evaluate(r.scores, r.name)
            for r in _SWEEP_RUNS
        ]
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


@dataclass
class Sweep:
    """The rows of a sweep, the runs on one side only, and why some cells are ``nan``."""

    rows: list[SweepRow]
    only_ours: list[str]
    only_official: list[str]
    notes: list[str] = field(default_factory=list)

    def left_out(self) -> list[str]:
        """The runs on one side only (the runs of the rows are on both)."""
        lines = []
        if self.only_ours:
            names = ", ".join(self.only_ours)
            lines.append(f"left out {len(self.only_ours)} runs not on the official leaderboard: {names}")
        if self.only_official:
            lines.append(f"official runs without a run file: {', '.join(self.only_official)}")
        return lines


def sweep(
    qrels_paths: list[Path],
    runs: list[Run] | list[Path] | list[RunSource],
    official: OfficialLike,
    *,
    measures: list[str] | str,
    levels: list[int] = (1,),  # type: ignore[assignment]
    digits: int | None = 4,
    complete: bool = False,
    queries: QuerySelection | Iterable[str] | None = None,
) -> Sweep:
    """Correlations for every qrels file x level x measure (rows ordered measure, qrels, level).

    ``queries`` restricts every qrels file (and so the runs) to these query ids. A ``nan`` cell
    (every run scores the same) is explained in the notes: which qrels, level and measures, and
    whether the level leaves no relevant passage.
    """
    ms = parse_measures(measures)  # every name checked before any file is read
    off = as_official(official)
    chosen = QuerySelection.of(queries)
    qrels_all = {p: chosen.restrict(read_qrels(p)) for p in qrels_paths}
    for p, q in qrels_all.items():
        chosen.check_present(q, str(p))
    if runs and not isinstance(runs[0], Run):
        wanted = set().union(*(q.keys() for q in qrels_all.values()))
        runs = load_run_columns(runs, queries=wanted)  # type: ignore[assignment]
    ranked = [r for r in runs if r.name in off.values]
    jobs = [(qrels_all[p], ms, levels, complete) for p in qrels_paths]
    global _SWEEP_RUNS
    _SWEEP_RUNS = ranked  # inherited by forked workers: the runs are not pickled per task
    try:
        summaries = _map_forked(_sweep_cell, jobs)
    finally:
        _SWEEP_RUNS = []
    cells: dict[tuple[str, Path, int], Correlation] = {}
    tied: dict[tuple[str, Path, int], float] = {}
    for path, by_cell in zip(qrels_paths, summaries, strict=True):
        for (label, level), ours in by_cell.items():
            c = cells[(label, path, level)] = correlate(ours, off, digits)
            if c.tied:
                tied[(label, path, level)] = ours[c.runs[0]]
    rows = [
        SweepRow(str(path), level, m.label, c.spearman, c.kendall)
        for m in ms
        for path in qrels_paths
        for level in levels
        for c in [cells[(m.label, path, level)]]
    ]
    first = next(iter(cells.values()))
    only_ours = sorted({r.name for r in runs} - set(off.values))
    notes = _unranked_notes(ranked, qrels_all, complete=complete) + _nan_notes(tied, ms, qrels_all, digits)
    return Sweep(rows, only_ours, first.only_official, notes)


def _ranked_queries(run: Run | RunColumns) -> set[str]:
    return set(run.queries) if isinstance(run, RunColumns) else {q for q, docs in run.scores.items() if docs}


def _unranked_notes(
    runs: list[Run | RunColumns], qrels_all: dict[Path, Qrels], *, complete: bool
) -> list[str]:
    """Runs that rank nothing for some queries of the qrels files (one line per set of queries)."""
    by_queries: dict[frozenset[str], list[Path]] = {}
    for path, qrels in qrels_all.items():
        by_queries.setdefault(frozenset(q for q, docs in qrels.items() if docs), []).append(path)
    notes = []
    for queries, paths in by_queries.items():
        short = [(r.name, len(queries - _ranked_queries(r))) for r in runs]
        short = [(name, n) for name, n in short if n]
        if short:
            where = str(paths[0]) if len(paths) == 1 else f"{len(paths)} qrels files"
            what = (
                "each counted as 0, as -c asks" if complete else "left out of their means, as trec_eval does"
            )
            listed = ", ".join(f"{name} ({n})" for name, n in short[:10]) + (
                " ..." if len(short) > 10 else ""
            )
            notes.append(
                f"{len(short)} of {len(runs)} runs rank no passage for some of the {len(queries)} queries "
                f"of {where} ({what}): {listed}"
            )
    return notes


def _nan_notes(
    tied: dict[tuple[str, Path, int], float], ms: list, qrels_all: dict[Path, Qrels], digits: int | None
) -> list[str]:
    """One line per (level, reason): the cells where every run scores the same, so rho and tau are
    nan. A binary measure at a level no passage reaches is the usual cause (RUBRIC grades 0-5 at
    ``-l 5``), which the line says."""
    by_label = {m.label: m for m in ms}
    groups: dict[tuple[int, str], tuple[set[str], list[Path]]] = {}
    for (label, path, level), value in tied.items():
        m = by_label[label]
        lvl = level if m.level is None else m.level
        relevant = sum(g >= lvl for docs in qrels_all[path].values() for g in docs.values())
        shown = f"{value:.{digits if digits is not None else 4}f}"
        if m.uses_level and relevant == 0:
            reason = f"no passage is judged >= {lvl} there, so every run scores {shown}"
        else:
            reason = f"every run scores {shown}"
        labels, paths = groups.setdefault((level, reason), (set(), []))
        labels.add(label)
        if path not in paths:
            paths.append(path)
    notes = []
    for (level, reason), (labels, paths) in groups.items():
        names_of = ", ".join(p.name for p in paths[:5]) + (", ..." if len(paths) > 5 else "")
        where = str(paths[0]) if len(paths) == 1 else f"{len(paths)} qrels files ({names_of})"
        names = ", ".join(m.label for m in ms if m.label in labels)
        notes.append(f"nan for {names} at -l {level} in {where}: {reason} (the correlation is undefined)")
    return notes


def sweep_tsv(rows: list[SweepRow], digits: int = 3) -> str:
    lines = ["method\tmin_rating\ttrec_eval_metric\tspearman\tkendall"]
    lines.extend(
        f"{r.method}\t{r.min_rating}\t{r.measure}\t{r.spearman:.{digits}f}\t{r.kendall:.{digits}f}"
        for r in rows
    )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SweepGrid:
    """What ``correlate --sweep`` evaluates: every qrels file (or directory of them) x relevance
    level (default 1) x measure over the runs, on the queries of ``query`` and ``queries_file``
    (default: all). Without ``--sweep`` every field must be empty."""

    qrels: Sequence[str | Path] | None = None
    runs: Sequence[str | Path] | None = None
    measures: Sequence[str] | None = None
    levels: Sequence[int] | None = None
    query: Sequence[str] | None = None
    queries_file: str | Path | None = None
    name_from: str = "tag"

    def options(self) -> list[tuple[str, object]]:
        """Each field with the option that sets it (a parameter name: the CLI spells its flag); the
        first three are required."""
        return [
            ("qrels", self.qrels), ("runs", self.runs), ("measure", self.measures),
            ("levels", self.levels), ("query", self.query), ("queries_file", self.queries_file),
            ("name_from", None if self.name_from == "tag" else self.name_from),
        ]  # fmt: skip


def correlation_output(
    official: str | Path,
    *,
    leaderboard: str | Path | None = None,
    measure: str | None = None,
    official_measure: str | None = None,
    digits: int = 4,
    sweep_grid: bool = False,
    grid: SweepGrid = SweepGrid(),
) -> Rendered:
    """``rubric evaluate correlate``: our leaderboard TSV against the official one (:func:`correlate`),
    or with ``sweep_grid`` the correlation of every cell of ``grid`` (:func:`sweep`); the TSV and
    the lines for stderr. ``digits`` < 0 ranks the full-precision scores.

    The options of the other mode are refused, and every option is checked, before any file is read.
    """
    rounding = None if digits < 0 else digits
    if sweep_grid:
        if leaderboard is not None:
            raise UserError(
                "{leaderboard}: not used with {sweep_grid} (it evaluates {runs} against {qrels})",
                *("leaderboard", "sweep_grid", "runs", "qrels"),
            )
        for option, given in grid.options()[:3]:
            if not given:
                raise UserError(f"{{{option}}}: {{sweep_grid}} needs it", option, "sweep_grid")
        one_of("name_from", grid.name_from, NAME_FROM)
        ms = parse_measures(list(grid.measures or []))  # before any file is read
        chosen = QuerySelection.from_options(grid.query, grid.queries_file)
        off = read_official(official, official_measure or measure)
        qrels, runs, levels = (
            expand_paths(grid.qrels or []),
            run_sources(grid.runs or [], grid.name_from),
            grid.levels or [1],
        )
        done = sweep(qrels, runs, off, measures=ms, levels=list(levels), digits=rounding, queries=chosen)
        return Rendered(sweep_tsv(done.rows), done.notes, before=done.left_out())
    if leaderboard is None:
        raise UserError(
            "{leaderboard}: give our leaderboard TSV (or use {sweep_grid})", "leaderboard", "sweep_grid"
        )
    for option, given in grid.options():
        if given:
            raise UserError(f"{{{option}}}: only used with {{sweep_grid}}", option, "sweep_grid")
    off = read_official(official, official_measure or measure)
    result = correlate(leaderboard, off, rounding, measure=measure)
    return Rendered(result.to_tsv(), before=result.left_out(leaderboard))
