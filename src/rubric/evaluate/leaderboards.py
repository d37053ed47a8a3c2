"""Leaderboards (module named in the plural so that ``rubric.evaluate.leaderboard`` is the
function): many runs x many measures against one qrels, exactly as trec_eval 9.0.8 scores them.

The qrels are handed to trec_eval once (one :class:`~rubric.evaluate.treceval.Evaluator` per
relevance level) and every run is evaluated against them; runs are read in parallel and only
their judged queries are kept. The result is a :class:`~rubric.evaluate.report.Report`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.query_selection import QuerySelection, absent_note
from rubric.data.trec import Qrels, Run, RunScores, read_qrels, read_runs
from rubric.evaluate.alpha_ndcg import max_qrels, read_item_qrels
from rubric.evaluate.measures import Measure, parse_measures
from rubric.evaluate.report import Report, Score
from rubric.evaluate.treceval import Evaluator, QueryValues

RunsLike = Iterable[Run | str | Path] | Mapping[str, RunScores]


def load_qrels(qrels: Qrels | str | Path) -> Qrels:
    return qrels if isinstance(qrels, dict) else read_qrels(qrels)


def load_runs(runs: RunsLike, queries: Iterable[str] | None = None, name_from: str = "tag") -> list[Run]:
    """Runs given as :class:`Run` objects, paths, or ``{name: scores}``."""
    if isinstance(runs, Mapping):
        return [Run(name, scores) for name, scores in runs.items()]
    items = list(runs)
    paths = [r for r in items if not isinstance(r, Run)]
    loaded = iter(read_runs(paths, queries=queries, name_from=name_from)) if paths else iter(())
    return [r if isinstance(r, Run) else next(loaded) for r in items]


def as_measures(measures: Iterable[str | Measure] | str) -> list[Measure]:
    """Measures given as names (``-m`` values) or :class:`Measure` objects, in order."""
    return parse_measures(measures)


@dataclass
class Evaluation:
    """Per-query values of every run, and what a reader should know about the queries."""

    results: list[QueryValues]
    notes: list[str] = field(default_factory=list)


def evaluate(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    level: int = 1,
    complete: bool = False,
    judged_only: bool = False,
    name_from: str = "tag",
    queries: QuerySelection | Iterable[str] | None = None,
) -> Evaluation:
    """Per-query values of every run (trec_eval ``-q`` output as data), with notes.

    ``queries`` restricts the qrels (and so the runs) to these query ids, as trec_eval would
    see a qrels file holding only them; the notes list selected ids the qrels lack and runs
    that rank nothing for some qrels queries (trec_eval says nothing about either).
    """
    ms = as_measures(measures)  # every name checked before any file is read
    chosen = QuerySelection.of(queries)
    items = None
    if any(m.needs_items for m in ms) and not isinstance(qrels, dict):
        items = chosen.restrict(read_item_qrels(qrels))  # per-item; trec_eval measures see the best grade
        qrels = max_qrels(items)
    where = "the qrels" if isinstance(qrels, dict) else str(qrels)
    loaded = load_qrels(qrels)
    absent = chosen.check_present(loaded, where)
    qrels = chosen.restrict(loaded)
    evaluator = Evaluator(qrels, ms, level=level, complete=complete, judged_only=judged_only, items=items)
    results = [evaluator.evaluate(r.scores, r.name) for r in load_runs(runs, qrels.keys(), name_from)]
    notes = [absent_note(absent, where, "selected"), unranked_note(results, complete)]
    return Evaluation(results, [n for n in notes if n])


def evaluate_runs(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    level: int = 1,
    complete: bool = False,
    judged_only: bool = False,
    name_from: str = "tag",
    queries: QuerySelection | Iterable[str] | None = None,
) -> list[QueryValues]:
    """Per-query values of every run (:func:`evaluate` without the notes)."""
    return evaluate(qrels, runs, measures, level, complete, judged_only, name_from, queries).results


def unranked_note(results: list[QueryValues], complete: bool) -> str | None:
    """One line about runs without a ranking for some qrels queries (trec_eval says nothing)."""
    short = [r for r in results if r.unranked]
    if not short:
        return None
    n_qrels = len(short[0].unranked) + len(short[0].retrieved)
    what = "each counted as 0, as -c asks" if complete else "left out of their means; -c counts them as 0"
    runs = ", ".join(f"{r.run} ({len(r.unranked)})" for r in short[:10])
    more = f" and {len(short) - 10} more" if len(short) > 10 else ""
    return (
        f"{len(short)} of {len(results)} runs rank no passage for some of the {n_qrels} qrels queries "
        f"({what}): {runs}{more}"
    )


def report_from(
    results: list[QueryValues], title: str = "leaderboard", notes: list[str] | None = None
) -> Report:
    scores = []
    for res in results:
        for m, column in res.values.items():
            scores.append(
                Score(
                    run=res.run,
                    measure=m.label,
                    value=res.summary(m),
                    per_query={q: column[q] for q in res.queries},
                    mean_aggregate=m.aggregate == "mean",
                )
            )
    return Report(scores, title=title, notes=list(notes or []))


def leaderboard(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    level: int = 1,
    complete: bool = False,
    judged_only: bool = False,
    name_from: str = "tag",
    queries: QuerySelection | Iterable[str] | None = None,
) -> Report:
    """Score runs with trec_eval measures; the report is sorted by the first measure.

    ``qrels`` and ``runs`` are paths (runs: files or directories) or loaded objects; the
    defaults are the CLI's (``-l 1``, no ``-c``, no ``-J``, run names from the run tag).

    >>> report = leaderboard("qrels.txt", ["runs/"], ["nDCG@10", "AP(rel=2)"], level=1)  # doctest: +SKIP
    >>> print(report.to_tsv())  # doctest: +SKIP
    """
    done = evaluate(qrels, _expand(runs), measures, level, complete, judged_only, name_from, queries)
    return report_from(done.results, notes=done.notes)


def _expand(runs: RunsLike) -> RunsLike:
    """Directories given as runs stand for the files in them."""
    if isinstance(runs, Mapping):
        return runs
    from rubric.data.trec import expand_paths

    out: list[Run | str | Path] = []
    for r in runs:
        out.extend([r] if isinstance(r, Run) else expand_paths([r]))
    return out
