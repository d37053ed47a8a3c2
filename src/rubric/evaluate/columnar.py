"""The measures campaigns use at scale, computed on whole runs as arrays, equal to trec_eval 9.0.8.

trec_eval walks each query's ranking in C; pytrec_eval wraps that walk but wants the run as a
dict of dicts, which costs more than the walk. Here a run stays in columns
(:class:`~rubric.data.run_columns.RunColumns`): its documents are looked up in the qrels in one
sorted search per query, and every query's relevance values become one row of a zero-padded
matrix (queries of similar length share a matrix, so padding at most doubles it). A measure is
then a few array operations on that matrix.

Values are equal to trec_eval's, not only close: its running sums (``map``, ``bpref``, DCG) are
sequential additions in rank order, and ``numpy.cumsum`` along a row adds in the same order (the
padding adds exact zeros); its divisions and ``log2`` discounts (from :func:`math.log2`, the C
library's) are the same IEEE operations. Relevance values follow trec_eval's ``form_res_rels``:
a document missing from the qrels is :data:`NONPOOL`, one judged with a negative grade
:data:`UNJUDGED` (judged, never relevant, left out by ``-J`` and of bpref's counts).

Computed here (:func:`computes`): ``map``, ``P``, ``recall``, ``ndcg_cut``, ``ndcg`` (default
gains), ``recip_rank``, ``Rprec``, ``bpref``, ``success``, ``num_ret``, ``num_rel``,
``num_rel_ret``, and this package's ``RR@k``, ``Judged@k``, ``ERR@k``
(:mod:`rubric.evaluate.ranked_measures` defines them and stays as their reference), with
``-l``, ``-J``, ``-M`` and per-measure ``rel=`` and ``judged_only=``. The other trec_eval
measures go to pytrec_eval.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property

import numpy as np

from rubric.data.run_columns import RunColumns
from rubric.data.trec import Qrels
from rubric.evaluate.measures import Measure
from rubric.evaluate.ranked_measures import err_max_grade

NONPOOL = -1  # trec_eval's RELVALUE_NONPOOL: not in the qrels
UNJUDGED = -2  # trec_eval's RELVALUE_UNJUDGED: in the qrels with a negative grade

_CUTOFF_BASES = ("P", "recall", "ndcg_cut", "success")
_PLAIN = frozenset({"map", "recip_rank", "Rprec", "bpref", "ndcg", "num_ret", "num_rel", "num_rel_ret"})
_OWN = frozenset({"RR", "Judged", "ERR"})


def computes(measure: Measure) -> bool:
    """Whether this engine computes ``measure`` (otherwise pytrec_eval or another module does)."""
    if measure.request in _OWN:
        return True
    if not measure.by_trec_eval or measure.gains is not None:
        return False
    if measure.request in _PLAIN:
        return measure.key == measure.request
    base, _, params = measure.request.partition(".")
    head, _, cutoff = measure.key.rpartition("_")
    return base in _CUTOFF_BASES and head == base and cutoff.isdigit()


def _cutoff(measure: Measure) -> int:
    """trec_eval's cutoff (``P_10``: 10), or the cutoff of one of this package's measures (0: none)."""
    if measure.request in _OWN:
        return measure.cutoff
    return int(measure.key.rpartition("_")[2])


@cache
def _discounts(length: int) -> np.ndarray:
    """``log2(rank + 1)`` for ranks 1..length, from C's log2 as trec_eval takes it."""
    return np.array([math.log2(i + 2) for i in range(length)], dtype=np.float64)


def discounts(length: int) -> np.ndarray:
    return _discounts(1 << max(length - 1, 0).bit_length())[:length]


@dataclass
class QrelsColumns:
    """The qrels as sorted arrays per query, with what each query's measures need of them."""

    index: dict[str, int]
    docs: list[np.ndarray]
    grades: list[np.ndarray]
    err_grade: int
    _counts: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    _words_of: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def of(cls, qrels: Qrels) -> QrelsColumns:
        index, docs, grades = {}, [], []
        for i, (q, judged) in enumerate(sorted(qrels.items())):
            index[q] = i
            names = np.array([d.encode() for d in judged], dtype=bytes) if judged else np.zeros(0, "S1")
            values = np.fromiter(judged.values(), dtype=np.int64, count=len(judged))
            order = np.argsort(names, kind="stable")
            docs.append(names[order])
            grades.append(values[order])
        return cls(index, docs, grades, err_max_grade(qrels))

    def relevance(self, query: str, docs: np.ndarray) -> np.ndarray:
        """trec_eval's relevance value of each document of ``query``'s ranking."""
        i = self.index.get(query)
        if i is None or not len(docs):
            return np.full(len(docs), NONPOOL, np.int64)
        judged, grades = self.docs[i], self.grades[i]
        if docs.dtype.itemsize <= 8 and judged.dtype.itemsize <= 8:  # ids of up to 8 bytes (MS MARCO v1)
            judged, grades = self._words(i)
            docs = docs.astype("S8", copy=False).view(np.uint64)
        else:
            width = max(judged.dtype.itemsize, docs.dtype.itemsize)
            judged, docs = judged.astype(f"S{width}"), docs.astype(f"S{width}")
        at = np.minimum(np.searchsorted(judged, docs), len(judged) - 1)
        found = judged[at] == docs
        grade = grades[at]
        return np.where(found, np.where(grade >= 0, grade, UNJUDGED), NONPOOL)

    def _words(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Query ``i``'s judged ids of up to 8 bytes as sorted 64-bit words (zero-padded, so
        equal words are equal ids, as numpy compares ``S`` strings: trailing NULs ignored), and
        their grades: a sorted search of integers, several times faster than one of strings."""
        if i not in self._words_of:
            words = self.docs[i].astype("S8").view(np.uint64)
            order = np.argsort(words, kind="stable")
            self._words_of[i] = (words[order], self.grades[i][order])
        return self._words_of[i]

    def counts(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """Per query: judged relevant (grade >= level) and judged non-relevant (0 <= grade < level)."""
        if level not in self._counts:
            rel = np.array([(g >= level).sum() for g in self.grades], dtype=np.int64)
            nonrel = np.array([((g >= 0) & (g < level)).sum() for g in self.grades], dtype=np.int64)
            self._counts[level] = (rel, nonrel)
        return self._counts[level]

    @cached_property
    def ideal_dcg(self) -> list[np.ndarray]:
        """Per query, the running ideal DCG: positive grades best first over trec_eval's discounts."""
        out = []
        for g in self.grades:
            gains = np.sort(g[g > 0])[::-1].astype(np.float64)
            out.append(np.cumsum(gains / discounts(len(gains))) if len(gains) else np.zeros(1))
        return out


@dataclass
class _Rows:
    """Some queries' relevance values, one zero-padded row each (pad: :data:`NONPOOL`)."""

    positions: np.ndarray  # into the evaluated queries
    qrels_rows: np.ndarray  # into the qrels' queries (-1: a query without judgments)
    values: np.ndarray  # (queries, length) int64
    lengths: np.ndarray

    def at(self, running: np.ndarray, k: int) -> np.ndarray:
        """The running value at rank ``k`` (the last rank where a row is shorter: the padding
        leaves it unchanged); ``k = 0`` the whole ranking."""
        column = running.shape[1] if k == 0 else min(k, running.shape[1])
        return running[:, column - 1]


def _buckets(rankings: list[np.ndarray]) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Positions, padded rows and lengths of the rankings, grouped by length (a power of two)."""
    lengths = np.array([len(r) for r in rankings], dtype=np.int64)
    size = np.maximum(lengths, 1)
    group = np.ceil(np.log2(size)).astype(np.int64)
    for g in np.unique(group):
        positions = np.flatnonzero(group == g)
        width = int(size[positions].max())
        rows = np.full((len(positions), width), NONPOOL, np.int64)
        for row, p in enumerate(positions.tolist()):
            rows[row, : lengths[p]] = rankings[p]
        yield positions, rows, lengths[positions]


def evaluate_columns(
    qrels: QrelsColumns,
    measures: list[Measure],
    run: RunColumns,
    queries: list[str],
    *,
    level: int,
    judged_only: bool,
    max_docs: int | None,
) -> dict[Measure, dict[str, float]]:
    """Per-query values of ``measures`` (all :func:`computes`) for ``run`` over ``queries``."""
    position = {q: i for i, q in enumerate(run.queries)}
    full = []
    for q in queries:
        i = position.get(q)
        docs = run.docs[run.block(i)][:max_docs] if i is not None else run.docs[:0]
        full.append(qrels.relevance(q, docs))
    qrows = np.array([qrels.index.get(q, -1) for q in queries], dtype=np.int64)
    by_ranking: dict[bool, list[Measure]] = {}  # -J or not: unjudged documents dropped after -M
    for m in measures:
        drop = judged_only if m.judged_only is None else m.judged_only
        by_ranking.setdefault(drop, []).append(m)
    out: dict[Measure, np.ndarray] = {m: np.zeros(len(queries)) for m in measures}
    for drop, group in by_ranking.items():
        # -J keeps what trec_eval keeps: grades >= 0 (a negative grade is in the pool, not judged)
        rankings = [r[r >= 0] for r in full] if drop else full
        for positions, values, lengths in _buckets(rankings):
            rows = _Rows(positions, qrows[positions], values, lengths)
            for m in group:
                lvl = level if m.level is None else m.level
                out[m][positions] = _measure(m, rows, qrels, lvl)
    return {m: dict(zip(queries, column.tolist(), strict=True)) for m, column in out.items()}


def _qrels_counts(qrels: QrelsColumns, rows: _Rows, level: int) -> tuple[np.ndarray, np.ndarray]:
    rel, nonrel = qrels.counts(level)
    present = rows.qrels_rows >= 0
    at = np.where(present, rows.qrels_rows, 0)
    return np.where(present, rel[at], 0), np.where(present, nonrel[at], 0)


def _measure(m: Measure, rows: _Rows, qrels: QrelsColumns, level: int) -> np.ndarray:
    base = m.request.partition(".")[0]
    values = rows.values
    if base == "ERR":
        return _err(rows, qrels.err_grade, m.cutoff)
    if base == "Judged":
        top = rows.lengths if m.cutoff == 0 else np.minimum(rows.lengths, m.cutoff)
        judged = rows.at(np.cumsum(values != NONPOOL, axis=1), m.cutoff)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(top > 0, judged / np.maximum(top, 1), 0.0)
    if base in ("ndcg", "ndcg_cut"):
        return _ndcg(rows, qrels, 0 if base == "ndcg" else _cutoff(m))
    relevant = values >= level
    found = np.cumsum(relevant, axis=1)
    num_rel, num_nonrel = _qrels_counts(qrels, rows, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        if base in ("RR", "recip_rank"):
            k = m.cutoff if base == "RR" else 0
            hit = relevant[:, : k or None]
            first = hit.argmax(axis=1)
            return np.where(hit.any(axis=1), 1.0 / (first + 1), 0.0)
        if base in ("P", "recall", "success"):
            k = _cutoff(m)
            at_k = rows.at(found, k)
            if base == "P":
                return at_k / k
            if base == "success":
                return np.where(at_k > 0, 1.0, 0.0)
            return np.where(num_rel > 0, at_k / np.maximum(num_rel, 1), 0.0)
        if base == "map":
            ranks = np.arange(1, values.shape[1] + 1, dtype=np.float64)
            total = np.cumsum(np.where(relevant, found / ranks, 0.0), axis=1)[:, -1]
            return np.where(found[:, -1] > 0, total / np.maximum(num_rel, 1), 0.0)
        if base == "Rprec":
            look = np.minimum(rows.lengths, num_rel)
            at = found[np.arange(len(look)), np.maximum(np.minimum(look, values.shape[1]) - 1, 0)]
            return np.where(look > 0, at / np.maximum(num_rel, 1), 0.0)
        if base == "bpref":
            return _bpref(values, relevant, num_rel, num_nonrel, level)
        if base == "num_ret":
            return rows.lengths.astype(np.float64)
        if base == "num_rel":
            return num_rel.astype(np.float64)
        if base == "num_rel_ret":
            return found[:, -1].astype(np.float64)
    raise ValueError(f"not a measure of this engine: {m.request}")


def _bpref(
    values: np.ndarray, relevant: np.ndarray, num_rel: np.ndarray, num_nonrel: np.ndarray, level: int
) -> np.ndarray:
    """trec_eval's bpref: per relevant document, 1 - (judged non-relevant above it, at most R) /
    min(judged non-relevant, R); summed in rank order and divided by R."""
    nonrel_above = np.cumsum((values >= 0) & (values < level), axis=1)
    r = num_rel[:, None]
    denominator = np.maximum(np.minimum(num_nonrel[:, None], r), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(nonrel_above > 0, 1.0 - np.minimum(nonrel_above, r) / denominator, 1.0)
    total = np.cumsum(np.where(relevant, term, 0.0), axis=1)[:, -1]
    return np.where(num_rel > 0, total / np.maximum(num_rel, 1), total)


def _ndcg(rows: _Rows, qrels: QrelsColumns, k: int) -> np.ndarray:
    """trec_eval's ndcg_cut (``k``) and ndcg (``k = 0``, the default gains: the grades)."""
    values = rows.values
    gains = np.where(values > 0, values, 0).astype(np.float64)
    dcg = rows.at(np.cumsum(np.where(values > 0, gains / discounts(values.shape[1]), 0.0), axis=1), k)
    ideal = qrels.ideal_dcg
    best = np.array(
        [ideal[q][(len(ideal[q]) if k == 0 else min(k, len(ideal[q]))) - 1] if q >= 0 else 0.0
         for q in rows.qrels_rows.tolist()]
    )  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        if k == 0:
            return np.where(best > 0, dcg / np.where(best > 0, best, 1.0), 0.0)
        return np.where(best > 0, dcg / np.where(best > 0, best, 1.0), dcg)


def _err(rows: _Rows, max_grade: int, k: int) -> np.ndarray:
    """ERR@k as gdeval.pl computes it (:func:`~rubric.evaluate.ranked_measures.expected_reciprocal_rank`)."""
    values = rows.values
    grade = np.maximum(values, 0).astype(np.float64)
    if max_grade < 1000:  # exact, as the reference's integers give it
        r = (2.0**grade - 1) / 2.0**max_grade
    else:  # 2.0**grade would overflow (grades up to MAX_GRADE): the same quotient from powers <= 1
        r = np.exp2(grade - max_grade) - np.exp2(-float(max_grade))
    before = np.cumprod(np.concatenate((np.ones((len(values), 1)), 1 - r[:, :-1]), axis=1), axis=1)
    ranks = np.arange(1, values.shape[1] + 1, dtype=np.float64)
    return rows.at(np.cumsum(r * before / ranks, axis=1), k)
