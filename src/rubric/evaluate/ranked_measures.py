"""Measures trec_eval lacks, computed here on trec_eval's ranking: RR@k, Judged@k, ERR@k.

ir_measures computes these with other tools (MS MARCO's script, a Python judgment rate,
gdeval.pl), each ranking ties its own way. Here every measure ranks a run as trec_eval 9.x does
(score as a 32-bit float descending, ties by docid descending), so ``RR(rel=2)@10`` and
``recip_rank`` see the same ranking; on runs without ties at the cutoff the values equal
ir_measures' (checked on the 37 TREC DL 2019 runs).

* ``RR(rel=N)@k`` (MS MARCO's MRR@10 is ``RR(rel=2)@10`` on TREC DL): 1 / rank of the first
  document graded >= N within the first k, else 0. N is ``rel=`` or ``-l``.
* ``Judged@k``: the share of the first k documents that have a judgment (any grade); a run with
  fewer than k documents is divided by its length, as ir_measures does.
* ``ERR@k`` (Chapelle et al., CIKM 2009), as gdeval.pl of the TREC Web track computes it:
  ``sum_i R_i / i * prod_{j<i} (1 - R_j)`` with ``R = (2^g - 1) / 2^G``; G is gdeval's maximum
  grade 4, or the qrels' highest grade where that is larger (Rubric-Qrels grade 0-5, which
  gdeval.pl refuses). Grades below 0 count 0; ``-l`` does not change it (like nDCG).
"""

from __future__ import annotations

from collections.abc import Mapping

from rubric.data.trec import Qrels, ranked
from rubric.evaluate.measures import Measure

#: gdeval.pl's MAX_JUDGMENT.
ERR_MAX_GRADE = 4


def reciprocal_rank(ranking: list[str], grades: Mapping[str, int], level: int, k: int) -> float:
    for rank, doc in enumerate(ranking[:k] if k else ranking, start=1):
        if doc in grades and grades[doc] >= level:
            return 1.0 / rank
    return 0.0


def judged_rate(ranking: list[str], grades: Mapping[str, int], k: int) -> float:
    top = ranking[:k] if k else ranking
    return sum(doc in grades for doc in top) / len(top) if top else 0.0


def expected_reciprocal_rank(ranking: list[str], grades: Mapping[str, int], k: int, max_grade: int) -> float:
    score, decay = 0.0, 1.0
    for rank, doc in enumerate(ranking[:k] if k else ranking, start=1):
        r = (2 ** max(grades.get(doc, 0), 0) - 1) / 2**max_grade
        score += r * decay / rank
        decay *= 1 - r
    return score


def err_max_grade(qrels: Qrels) -> int:
    return max([ERR_MAX_GRADE, *(g for docs in qrels.values() for g in docs.values())])


def evaluate_ranked(
    measures: list[Measure],
    qrels: Qrels,
    run: Mapping[str, Mapping[str, float]],
    *,
    queries: list[str],
    level: int,
    judged_only: bool = False,
) -> dict[Measure, dict[str, float]]:
    """Per-query values of these measures (``RR``, ``Judged``, ``ERR``) over ``queries``.

    ``level`` is ``-l`` for measures without ``rel=``; ``judged_only`` is ``-J`` for measures
    without ``judged_only=`` of their own (unjudged documents, and those graded below 0, are
    dropped before ranking, as trec_eval's -J drops them).
    """
    max_grade = err_max_grade(qrels) if any(m.request == "ERR" for m in measures) else ERR_MAX_GRADE
    orders = {q: [d for d, _ in ranked(dict(run.get(q) or {}))] for q in queries}
    out: dict[Measure, dict[str, float]] = {}
    for m in measures:
        drop_unjudged = judged_only if m.judged_only is None else m.judged_only
        column = {}
        for q in queries:
            grades = qrels.get(q, {})
            # -J keeps what trec_eval keeps: grades >= 0 (a negative grade is "in the pool, not judged")
            ranking = [d for d in orders[q] if grades.get(d, -1) >= 0] if drop_unjudged else orders[q]
            if m.request == "RR":
                column[q] = reciprocal_rank(ranking, grades, level if m.level is None else m.level, m.cutoff)
            elif m.request == "Judged":
                column[q] = judged_rate(ranking, grades, m.cutoff)
            elif m.request == "ERR":
                column[q] = expected_reciprocal_rank(ranking, grades, m.cutoff, max_grade)
            else:
                raise ValueError(f"not a measure of this module: {m.request}")
        out[m] = column
    return out
