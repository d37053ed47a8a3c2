from __future__ import annotations

import itertools
import math

import pytest
from scipy.stats import ttest_rel

from rubric.errors import UserError
from rubric.evaluate.paired import adjust, cohens_d, compare_scores, paired_p_value

A = {"q1": 0.2, "q2": 0.4, "q3": 0.1, "q4": 0.5, "q5": 0.3, "q6": 0.6}
B = {"q1": 0.3, "q2": 0.7, "q3": 0.2, "q4": 0.6, "q5": 0.2, "q6": 0.9}


def test_t_test_equals_scipy_and_effect_size():
    (row,) = compare_scores({"a": A, "b": B}, "m", test="t", correction="none")
    qs = sorted(A)
    assert row.p_value == pytest.approx(ttest_rel([B[q] for q in qs], [A[q] for q in qs]).pvalue)
    diffs = [B[q] - A[q] for q in qs]
    mean = sum(diffs) / 6
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 5)
    assert row.effect_size == pytest.approx(mean / sd)
    assert row.diff == pytest.approx(mean) and row.n_queries == 6


def test_randomization_approaches_the_exact_permutation_p_value():
    diffs = [B[q] - A[q] for q in sorted(A)]
    observed = abs(sum(diffs))
    flips = list(itertools.product([-1, 1], repeat=6))
    exact = sum(
        abs(sum(s * d for s, d in zip(f, diffs, strict=True))) >= observed - 1e-12 for f in flips
    ) / len(flips)
    p = paired_p_value(diffs, "randomization", n_resamples=20_000, seed=1)
    assert p == pytest.approx(exact, abs=0.01)
    assert p == paired_p_value(diffs, "randomization", n_resamples=20_000, seed=1)  # seeded
    boot = paired_p_value(diffs, "bootstrap", n_resamples=5_000, seed=1)
    assert 0.0 < boot < 0.2


def test_corrections():
    assert adjust([0.01, 0.04, 0.03], "bonferroni") == pytest.approx([0.03, 0.12, 0.09])
    assert adjust([0.01, 0.04, 0.03], "holm") == pytest.approx([0.03, 0.06, 0.06])
    assert adjust([0.5, 0.6], "holm") == pytest.approx([1.0, 1.0])
    assert cohens_d([0.1, 0.1]) == math.inf


def test_pairs_baseline_and_errors():
    rows = compare_scores({"a": A, "b": B, "c": A}, "m", correction="bonferroni")
    assert [(r.run_a, r.run_b) for r in rows] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert rows[1].p_value == 1.0 and rows[0].p_adjusted == pytest.approx(min(1, 3 * rows[0].p_value))
    rows = compare_scores({"a": A, "b": B, "c": A}, "m", baseline="c")
    assert [(r.run_a, r.run_b) for r in rows] == [("c", "a"), ("c", "b")]
    with pytest.raises(UserError, match="baseline: no run named 'x'"):
        compare_scores({"a": A, "b": B}, "m", baseline="x")
    with pytest.raises(UserError, match="^test: expected one of"):
        compare_scores({"a": A, "b": B}, "m", test="wilcoxon")
