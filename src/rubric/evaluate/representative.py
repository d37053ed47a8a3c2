"""Representative queries: the topics whose own ranking of the runs is closest to the ranking
over all topics (the original workbench's leaderboard_repr_queries).

A small set of such topics is where a reviewer's time goes furthest: judging them well moves the
whole leaderboard. Each topic's ranking of the runs (by its per-query score, ties averaged) is
compared with the ranking by the runs' overall scores with Kendall's tau-b; topics are listed by
tau, highest first (ties by query id; topics where every run scores the same have no tau and come
last). Scores come from trec_eval with ``-c`` by default, as the original ran it, so every run has
a value on every topic; they are ranked as trec_eval prints them, to 4 decimals, as the original
read them from trec_eval's output: scores equal to 4 decimals are ties (their average rank).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rubric.errors import UserError
from rubric.evaluate.report import Rendered, Report


@dataclass(frozen=True)
class QueryTau:
    query: str
    tau: float
    runs: int


def printed(value: float) -> float:
    """``value`` as trec_eval prints it (``%6.4f``) and the original read it back."""
    return float(f"{value:.4f}")


def representative_queries(report: Report, measure: str | None = None) -> list[QueryTau]:
    """Every topic's Kendall tau-b between its ranking of the runs and the overall ranking,
    highest first. ``measure``: the report's measure to use (default: its only / first one)."""
    from scipy.stats import kendalltau, rankdata

    measures = list(dict.fromkeys(s.measure for s in report.scores))
    if not measures:
        raise UserError("runs: nothing was scored")
    chosen = measure or measures[0]
    scores = [s for s in report.scores if s.measure == chosen]
    if len(scores) < 2:
        raise UserError(f"runs: a ranking needs at least 2 runs, got {len(scores)}")
    overall = rankdata([-printed(s.value) for s in scores])
    topics = sorted({q for s in scores for q in s.per_query})
    out = []
    for topic in topics:
        values = [printed(s.per_query.get(topic, 0.0)) for s in scores]  # -c: a missing topic scores 0
        if len(set(values)) < 2:
            tau = math.nan
        else:
            tau = float(kendalltau(overall, rankdata([-v for v in values])).statistic)
        out.append(QueryTau(topic, tau, len(scores)))
    return sorted(out, key=lambda t: (math.isnan(t.tau), -t.tau if not math.isnan(t.tau) else 0.0, t.query))


def representative_output(
    qrels: str | Path,
    runs: Iterable[str | Path],
    measure: str,
    *,
    level: int = 1,
    complete: bool = True,
    top: int | None = None,
    digits: int = 4,
    name_from: str = "tag",
) -> Rendered:
    """``rubric evaluate representative``: the topics by tau as TSV (rank, query, tau, runs),
    the first ``top`` of them (default: all), and the notes for stderr."""
    from rubric.evaluate.leaderboards import evaluate, report_from

    if top is not None and top < 1:
        raise UserError(f"{{top}}: must be at least 1, got {top}", "top")
    done = evaluate(
        qrels, list(runs), [measure], level=level, complete=complete, judged_only=False, name_from=name_from
    )
    ranked = representative_queries(report_from(done.results))
    shown = ranked[:top] if top is not None else ranked
    lines = ["rank\tquery\ttau\truns"] + [
        f"{i}\t{t.query}\t{'nan' if math.isnan(t.tau) else f'{t.tau:.{digits}f}'}\t{t.runs}"
        for i, t in enumerate(shown, start=1)
    ]
    return Rendered(
        "\n".join(lines) + "\n", [*done.notes, f"ranked {len(ranked)} topics by {len(done.results)} runs"]
    )
