"""alpha-nDCG@k (Clarke et al., SIGIR 2008) over per-item qrels: novelty across test items.

Per-item qrels (``rubric evaluate qrels --per-item``) say which test items (questions, nuggets)
a passage answers: ``qid item_id docid grade``. A passage answering item i at rank r gains
``(1 - alpha) ** (passages above r that answer i)``, so a ranking that answers new items beats
one that repeats the same item; discount ``log2(1 + r)``. The ideal ranking is built greedily
over the judged passages, as NTCIR's and TREC's ndeval do. An item counts as answered when its
grade is at least the relevance level (``-l``). Runs are ranked as trec_eval ranks them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from rubric.data.files import read_text, text_lines
from rubric.data.trec import Qrels, ranked
from rubric.errors import UserError

ItemQrels = dict[str, dict[str, dict[str, int]]]  # qid -> docid -> item -> grade


def read_item_qrels(path: str | Path) -> ItemQrels:
    """Per-item qrels: column 2 is the item id (``rubric evaluate qrels --per-item``)."""
    out: ItemQrels = {}
    first: dict[tuple[str, str, str], int] = {}
    for line_no, line in text_lines(read_text(path)):
        cols = line.split()
        if not cols or cols[0].startswith("#"):
            continue
        if len(cols) != 4:
            raise UserError(
                f"{path}:{line_no}: a qrels line has 4 columns (qid item docid grade), found {len(cols)}"
            )
        try:
            grade = int(cols[3])
        except ValueError:
            raise UserError(f"{path}:{line_no}: grade must be an integer, found {cols[3]!r}") from None
        key = (cols[0], cols[1], cols[2])
        if key in first:
            raise UserError(
                f"{path}:{line_no}: query {cols[0]} item {cols[1]} document {cols[2]} is graded again "
                f"(first on line {first[key]})"
            )
        first[key] = line_no
        out.setdefault(cols[0], {}).setdefault(cols[2], {})[cols[1]] = grade
    return out


def max_qrels(items: ItemQrels) -> Qrels:
    """Passage labels for trec_eval measures: the best grade over the items (Rubric-Qrels ``max``)."""
    return {q: {d: max(g.values()) for d, g in docs.items()} for q, docs in items.items()}


def _dcg(ranking: list[set[str]], k: int, alpha: float) -> float:
    seen: dict[str, int] = {}
    total = 0.0
    for rank, found in enumerate(ranking[:k], start=1):
        gain = sum((1 - alpha) ** seen.get(i, 0) for i in found)
        for i in found:
            seen[i] = seen.get(i, 0) + 1
        total += gain / math.log2(1 + rank)
    return total


def _ideal(pool: list[set[str]], k: int, alpha: float) -> float:
    """Greedy ideal ranking (the exact one is NP-hard): each step takes the largest next gain."""
    remaining = [s for s in pool if s]
    seen: dict[str, int] = {}
    total = 0.0
    for rank in range(1, k + 1):
        if not remaining:
            break
        gains = [sum((1 - alpha) ** seen.get(i, 0) for i in s) for s in remaining]
        best = max(range(len(remaining)), key=lambda j: gains[j])
        for i in remaining[best]:
            seen[i] = seen.get(i, 0) + 1
        total += gains[best] / math.log2(1 + rank)
        remaining.pop(best)
    return total


def alpha_ndcg(
    items: ItemQrels,
    run: Mapping[str, Mapping[str, float]],
    queries: list[str],
    *,
    k: int,
    alpha: float = 0.5,
    level: int = 1,
) -> dict[str, float]:
    """alpha-nDCG@k per query (0 where no passage answers any item, or the run has none)."""
    out = {}
    for q in queries:
        judged = {d: {i for i, g in grades.items() if g >= level} for d, grades in items.get(q, {}).items()}
        ideal = _ideal(list(judged.values()), k, alpha)
        ranking = [judged.get(d, set()) for d, _ in ranked(dict(run.get(q, {})))]
        out[q] = _dcg(ranking, k, alpha) / ideal if ideal > 0 else 0.0
    return out
