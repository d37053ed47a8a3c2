"""Paired significance tests of two runs over per-query scores, and their correction.

Three tests, the ones IR papers use: Student's paired t-test (scipy), the paired randomization
(permutation) test that flips the sign of each query's difference, and the paired bootstrap
test (shift the differences to mean zero, resample queries). Both resampling tests are seeded,
so a p-value in a paper can be recomputed. The effect size is Cohen's d of the paired
differences (mean / sample standard deviation). Holm or Bonferroni correct the p-values of all
pairs compared in one call. This module works on scores already computed, so both `evaluate
compare` (:mod:`rubric.evaluate.significance`) and the marks of a wide leaderboard
(:mod:`rubric.evaluate.wide`) use it without importing the leaderboard code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

from rubric.errors import UserError, one_of

TESTS = ("t", "randomization", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "none")


@dataclass
class Comparison:
    run_a: str
    run_b: str
    measure: str
    mean_a: float
    mean_b: float
    p_value: float
    p_adjusted: float
    effect_size: float
    n_queries: int

    @property
    def diff(self) -> float:
        return self.mean_b - self.mean_a


def paired_p_value(diffs: list[float], test: str = "t", n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value that the mean paired difference is zero."""
    import numpy as np

    d = np.asarray(diffs, dtype=np.float64)
    if len(d) < 2:
        return math.nan
    if test == "t":
        from scipy.stats import ttest_1samp

        if np.all(d == d[0]):
            return 1.0 if d[0] == 0 else 0.0
        return float(ttest_1samp(d, 0.0).pvalue)
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    tol = 1e-12  # equal means up to rounding count as "at least as extreme"
    if test == "randomization":
        signs = rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, len(d)))
        stats = np.abs((signs * d).mean(axis=1))
    elif test == "bootstrap":
        shifted = d - d.mean()
        idx = rng.integers(0, len(d), size=(n_resamples, len(d)))
        stats = np.abs(shifted[idx].mean(axis=1))
    else:
        one_of("test", test, TESTS)  # raises: every test of TESTS is handled above
    return float((np.count_nonzero(stats >= observed - tol) + 1) / (n_resamples + 1))


def adjust(p_values: list[float], method: str = "holm") -> list[float]:
    """Holm (step-down) or Bonferroni adjusted p-values, capped at 1."""
    m = len(p_values)
    if method == "none":
        return list(p_values)
    if method == "bonferroni":
        return [min(1.0, p * m) if p == p else p for p in p_values]
    one_of("correction", method, CORRECTIONS)
    order = sorted(range(m), key=lambda i: (p_values[i] != p_values[i], p_values[i]))
    adjusted = [math.nan] * m
    running = 0.0
    for rank, i in enumerate(order):
        if p_values[i] != p_values[i]:
            continue
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def cohens_d(diffs: list[float]) -> float:
    n = len(diffs)
    if n < 2:
        return math.nan
    mean = sum(diffs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1))
    return mean / sd if sd > 0 else (0.0 if mean == 0 else math.copysign(math.inf, mean))


def compare_scores(
    per_query: dict[str, dict[str, float]],
    measure: str,
    *,
    test: str = "t",
    correction: str = "holm",
    n_resamples: int = 10_000,
    seed: int = 0,
    baseline: str | None = None,
) -> list[Comparison]:
    """Compare runs pairwise (or each with ``baseline``) on the queries both have.

    ``per_query`` is ``{run: {query: value}}``; with trec_eval's ``-c`` every run has every
    qrels query, otherwise a pair is compared on the queries both runs answered.
    """
    one_of("test", test, TESTS)
    one_of("correction", correction, CORRECTIONS)
    runs = list(per_query)
    if len(runs) < 2:
        raise UserError("{runs}: give at least two runs to compare", "runs")
    if baseline is not None:
        if baseline not in per_query:
            raise UserError(f"{{baseline}}: no run named {baseline!r}; runs: {', '.join(runs)}", "baseline")
        pairs = [(baseline, r) for r in runs if r != baseline]
    else:
        pairs = list(combinations(runs, 2))
    rows = []
    for a, b in pairs:
        queries = sorted(set(per_query[a]) & set(per_query[b]))
        va = [per_query[a][q] for q in queries]
        vb = [per_query[b][q] for q in queries]
        diffs = [y - x for x, y in zip(va, vb, strict=True)]
        n = len(queries)
        rows.append(
            Comparison(
                run_a=a,
                run_b=b,
                measure=measure,
                mean_a=sum(va) / n if n else math.nan,
                mean_b=sum(vb) / n if n else math.nan,
                p_value=paired_p_value(diffs, test, n_resamples, seed),
                p_adjusted=math.nan,
                effect_size=cohens_d(diffs),
                n_queries=n,
            )
        )
    for row, p in zip(rows, adjust([r.p_value for r in rows], correction), strict=True):
        row.p_adjusted = p
    return rows
