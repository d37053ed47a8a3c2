"""Leaderboards (module named in the plural so that ``rubric.evaluate.leaderboard`` is the
function): many runs x many measures against one qrels, exactly as trec_eval 9.0.8 scores them.

The qrels are handed to trec_eval once (one :class:`~rubric.evaluate.treceval.Evaluator` per
relevance level) and every run is evaluated against them; runs are read in parallel and only
their judged queries are kept. The result is a :class:`~rubric.evaluate.report.Report`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

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
    out: list[Measure] = []
    for m in [measures] if isinstance(measures, str) else measures:
        out.extend([m] if isinstance(m, Measure) else parse_measures([m]))
    return out


def evaluate_runs(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    level: int = 1,
    complete: bool = False,
    judged_only: bool = False,
    name_from: str = "tag",
) -> list[QueryValues]:
    """Per-query values of every run (trec_eval ``-q`` output as data)."""
    ms = as_measures(measures)
    items = None
    if any(m.needs_items for m in ms) and not isinstance(qrels, dict):
        items = read_item_qrels(qrels)  # per-item qrels; trec_eval measures see the best grade
        qrels = max_qrels(items)
    qrels = load_qrels(qrels)
    evaluator = Evaluator(qrels, ms, level=level, complete=complete, judged_only=judged_only, items=items)
    return [evaluator.evaluate(r.scores, r.name) for r in load_runs(runs, qrels.keys(), name_from)]


def report_from(results: list[QueryValues], title: str = "leaderboard") -> Report:
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
    return Report(scores, title=title)


def leaderboard(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    level: int = 1,
    complete: bool = False,
    judged_only: bool = False,
    name_from: str = "tag",
) -> Report:
    """Score runs with trec_eval measures; the report is sorted by the first measure.

    >>> report = leaderboard("qrels.txt", ["runs/"], ["nDCG@10", "AP(rel=2)"], level=1)  # doctest: +SKIP
    >>> print(report.to_tsv())  # doctest: +SKIP
    """
    runs = _expand(runs)
    return report_from(evaluate_runs(qrels, runs, measures, level, complete, judged_only, name_from))


def _expand(runs: RunsLike) -> RunsLike:
    """Directories given as runs stand for the files in them."""
    if isinstance(runs, Mapping):
        return runs
    from rubric.data.trec import expand_paths

    out: list[Run | str | Path] = []
    for r in runs:
        out.extend([r] if isinstance(r, Run) else expand_paths([r]))
    return out
