"""Citation support scores of RAG answers (TREC 2024 RAG support evaluation, Thakur et al. 2025).

From the judgments of :mod:`rubric.grading.support` (each answer sentence against each segment
it cites: full, partial or no support, weighted 1, 0.5 and 0), per answer:

- **weighted precision**: the mean weight over the answer's (sentence, citation) pairs: how much
  of what the answer cites supports the sentence that cites it;
- **weighted recall**: the mean over the answer's sentences of the best weight among the
  sentence's citations, a sentence without a citation counting 0: how much of the answer is
  supported by what it cites.

A run's score is the mean over the topics it answered, with the standard error. An answer
without any citation has no precision (left out of that mean; ``n_queries`` says how many
counted) and recall 0. An answer with a pair left unjudged (a failed LLM call) is left out of
both means and reported: a gap is not "no support".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric.evaluate.report import Report, Score

MEASURES = ("support_precision", "support_recall")
WEIGHTS = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}


def answer_support(sentences: Sequence[dict[str, Any]]) -> dict[str, float | None] | None:
    """Weighted precision and recall of one answer's judged sentences (module docstring); None
    when a pair is unjudged. Precision is None for an answer without citations."""
    pairs = [c["support"] for s in sentences for c in s["citations"]]
    if any(p is None for p in pairs):
        return None
    best = [max((WEIGHTS[c["support"]] for c in s["citations"]), default=0.0) for s in sentences]
    return {
        "support_precision": sum(WEIGHTS[p] for p in pairs) / len(pairs) if pairs else None,
        "support_recall": sum(best) / len(best) if best else 0.0,
    }


@dataclass
class SupportReport(Report):
    """Support scores per run (best weighted precision first) and what was left out."""

    unjudged: list[tuple[str, str]] = field(default_factory=list)  # (run, topic) with failed pairs


def support_scores(records: Sequence[dict[str, Any]]) -> SupportReport:
    """The runs' support scores from SUPPORT records (:mod:`rubric.grading.support`)."""
    per_run: dict[str, dict[str, dict[str, float]]] = {}
    unjudged = []
    for rec in records:
        run, topic = str(rec["run_id"]), str(rec["topic_id"])
        scores = per_run.setdefault(run, {m: {} for m in MEASURES})
        got = answer_support(rec["sentences"])
        if got is None:
            unjudged.append((run, topic))
            continue
        for m in MEASURES:
            if (value := got[m]) is not None:
                scores[m][topic] = value
    out = []
    for run, scores in per_run.items():
        for m in MEASURES:
            values = scores[m]
            mean = sum(values.values()) / len(values) if values else float("nan")
            out.append(Score(run=run, measure=m, value=mean, per_query=dict(values)))
    notes = [
        f"run {run} topic {topic}: left out (a sentence-citation pair has no judgment; re-run to retry it)"
        for run, topic in unjudged
    ]
    return SupportReport(out, title="citation support", notes=notes, unjudged=unjudged)
