"""The prediction-powered estimates against the reference implementation (ppi_py) and against a
direct, loop-by-loop computation of the finite-population mode."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rubric.evaluate.ppi import estimate_means, shrunk_slope, tuned_weight

ppi_py = pytest.importorskip("ppi_py")


def _data(seed: int, n: int, n_all: int, noise: float = 0.3):
    rng = np.random.default_rng(seed)
    truth = rng.beta(2, 3, n_all)
    llm = np.clip(truth * 0.8 + 0.1 + rng.normal(0, noise, n_all), 0, 1)
    judged = rng.choice(n_all, n, replace=False)
    return truth, llm, judged


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [3, 10, 25])
def test_ppi_py_mode_equals_ppi_py(seed, n):
    truth, llm, judged = _data(seed, n, 60, noise=0.05 + 0.1 * seed)
    rest = np.setdiff1d(np.arange(60), judged)
    y, yhat, unl = truth[judged], llm[judged], llm[rest]
    for confidence in (0.9, 0.95):
        est = estimate_means(y, yhat, unl, confidence, mode="ppi_py")
        alpha = 1 - confidence
        lam = ppi_py.ppi_mean_pointestimate(y, yhat, unl)  # noqa: F841 - the point estimate path runs too
        low, high = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=alpha)
        assert est.ppipp.low == pytest.approx(float(np.ravel(low)[0]), abs=1e-9)
        assert est.ppipp.high == pytest.approx(float(np.ravel(high)[0]), abs=1e-9)
        assert est.ppipp.value == pytest.approx(
            float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, unl))[0]), abs=1e-9
        )
        low, high = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=alpha, lam=1)
        assert (float(est.ppi.low), float(est.ppi.high)) == pytest.approx(
            (float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9
        )
        low, high = ppi_py.classical_mean_ci(y, alpha=alpha)
        assert (float(est.human.low), float(est.human.high)) == pytest.approx(
            (float(low), float(high)), abs=1e-9
        )


def test_ppi_py_weight_equals_ppi_py():
    from ppi_py.ppi import _calc_lam_glm

    for seed in range(10):
        truth, llm, judged = _data(seed, 12, 50, noise=0.05 * seed)
        rest = np.setdiff1d(np.arange(50), judged)
        y, yhat, unl = truth[judged], llm[judged], llm[rest]
        pointest = unl.mean() + (y - yhat).mean()
        ref = _calc_lam_glm(
            (y - pointest)[:, None],
            (yhat - pointest)[:, None],
            (unl - pointest)[:, None],
            np.eye(1),
            clip=True,
        )
        assert float(tuned_weight(y, yhat, unl, "ppi_py")) == pytest.approx(float(ref), abs=1e-12)


def _unseen(n, n_all, confidence):
    """The share of topics n judged ones all miss with probability above alpha/2, from scipy's
    hypergeometric distribution (the library counts with math.comb)."""
    alpha = (1 - confidence) / 2
    return next(k for k in range(n_all + 1) if stats.hypergeom(n_all, k, n).pmf(0) <= alpha + 1e-15) / n_all


def _direct(y, yhat, llm_all, confidence, low=0.0, high=1.0):
    """The finite mode written out loop by loop, with scipy's t quantiles: each judged topic's
    term uses the slope learnt without it, shrunk by its t statistic against the t quantile at
    the interval's own level; PPI++ spends the mean used share of those slopes as degrees of
    freedom (n - 1 - k); the topic variance is at least that of the unseen share at the far end
    of [low, high], and the interval is clipped to it."""
    n, n_all = len(y), len(llm_all)
    mu = sum(llm_all) / n_all
    upper = 1 - (1 - confidence) / 2
    fpc = 1 - n / n_all

    mean_all = sum(llm_all) / n_all
    var_all = sum((h - mean_all) ** 2 for h in llm_all) / (n_all - 1)

    def slope(ys, hs):
        """(fitted slope b, weight used)."""
        m = len(ys)
        if m < 2 or var_all <= 1e-15:  # no slope from one topic
            return 0.0, 0.0
        my, mh = sum(ys) / m, sum(hs) / m
        sxy = sum((a - my) * (h - mh) for a, h in zip(ys, hs, strict=True)) / (m - 1)
        b = sxy / var_all
        resid = sum((a - my - b * (h - mh)) ** 2 for a, h in zip(ys, hs, strict=True)) / max(m - 2, 1)
        se2 = resid / ((m - 1) * var_all)
        q = stats.t.ppf(upper, max(m - 2, 1))
        keep = max(0.0, 1 - q * q * se2 / (b * b)) if b * b > 1e-15 else 0.0
        return b, min(1.0, max(0.0, b * keep))

    out = {}
    census = n == n_all  # every topic judged: the human mean, no weight
    rules = (("human", lambda ys, hs: (0.0, 0.0)), ("ppi", lambda ys, hs: (0.0, 1.0)), ("ppipp", slope))
    for name, rule in rules:
        if census and name == "ppipp":
            rule = lambda ys, hs: (0.0, 0.0)  # noqa: E731
        terms, used = [], []
        for i in range(n):  # cross-fit: topic i's weight is learnt without topic i
            ys = [a for j, a in enumerate(y) if j != i]
            hs = [h for j, h in enumerate(yhat) if j != i]
            b, lam = rule(ys, hs)
            terms.append(y[i] - lam * (yhat[i] - mu))
            used.append(lam / b if b > 0 else 0.0)
        df = n - 1 - (sum(used) / n if name == "ppipp" else 0.0)
        value = sum(terms) / n
        share = _unseen(n, n_all, confidence)
        floor = share * (1 - share) * max(value - low, high - value) ** 2
        var = fpc * max(sum((t - value) ** 2 for t in terms) / df, floor) / n
        q = stats.t.ppf(upper, df)
        out[name] = (value, max(low, value - q * math.sqrt(var)), min(high, value + q * math.sqrt(var)))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [2, 3, 5, 12, 40])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_finite_mode_equals_the_direct_formula(seed, n, confidence):
    truth, llm, judged = _data(seed, n, 40, noise=0.02 + 0.1 * seed)
    y, yhat = list(truth[judged]), list(llm[judged])
    est = estimate_means(truth[judged], llm[judged], llm, confidence)
    ref = _direct(y, yhat, list(llm), confidence)
    for name in ("human", "ppi", "ppipp"):
        e = getattr(est, name)
        assert (float(e.value), float(e.low), float(e.high)) == pytest.approx(ref[name], abs=1e-9)


def _floor(value, n, n_all, confidence=0.95):
    share = _unseen(n, n_all, confidence)
    return share * (1 - share) * max(value, 1 - value) ** 2


def test_fixed_weight_variance_is_the_textbook_one():
    """For a fixed weight the variance is (1 - n/N) s^2 / n, the SRSWOR variance, where s^2 is
    above the floor (spread-out values, 30 of 45 topics judged)."""
    rng = np.random.default_rng(3)
    truth = rng.random(45)
    llm = np.clip(truth + rng.normal(0, 0.4, 45), 0, 1)
    judged = rng.choice(45, 30, replace=False)
    est = estimate_means(truth[judged], llm[judged], llm, 0.95)
    for e, d in ((est.ppi, truth[judged] - llm[judged]), (est.human, truth[judged])):
        assert d.var(ddof=1) > _floor(float(e.value), 30, 45)  # the floor does not bind here
        half = stats.t.ppf(0.975, 29) * math.sqrt((1 - 30 / 45) * d.var(ddof=1) / 30)
        assert float(e.high - e.value) == pytest.approx(half, abs=1e-12)


def test_equal_judged_values_get_a_positive_width_inside_the_range():
    """Five judged topics that all score 1 (RR@10 often does) cannot show that a share of the
    topics scores less: the interval reaches down as far as that share at 0 would, and stays
    inside [0, 1]; only a census has zero width."""
    y = np.ones(5)
    llm = np.r_[np.ones(5), np.zeros(38)]
    est = estimate_means(y, y, llm, 0.95)
    share = _unseen(5, 43, 0.95)
    assert float(est.human.high) == 1.0 and float(est.human.low) < 1.0 - 0.5 * share
    for e in (est.human, est.ppi, est.ppipp):  # PPI trusts the LLM's zeros: its estimate is low
        assert 0.0 <= float(e.low) < float(e.value) <= float(e.high) <= 1.0 and e.width > 0
    half = stats.t.ppf(0.975, 4) * math.sqrt((1 - 5 / 43) * share * (1 - share) / 5)
    assert float(est.human.low) == pytest.approx(1 - half, abs=1e-12)
    # a difference of two runs that is 0 on every judged topic: positive width, inside [-1, 1]
    d = estimate_means(np.zeros(5), np.zeros(5), np.zeros(43), 0.95, limits=(-1.0, 1.0))
    assert -1.0 <= float(d.human.low) < 0.0 < float(d.human.high) <= 1.0


def test_every_topic_judged_gives_the_exact_mean():
    truth, llm, _ = _data(1, 30, 30)
    est = estimate_means(truth, llm, llm, 0.95)
    for e in (est.human, est.ppi, est.ppipp):
        assert float(e.value) == pytest.approx(truth.mean(), abs=1e-12)
        assert float(e.width) == pytest.approx(0.0, abs=1e-12)


def test_perfect_llm_labels_give_a_large_weight_and_a_narrow_interval():
    """The slope is learnt against the known all-topic variance, so even perfect labels give a
    slope with some noise, which the shrinkage pays for; the terms then vary less than what 30
    of 40 judged topics may have missed, so the interval is the floor's (here human only's is
    too), never wider than human only's and holding the truth."""
    truth, _, judged = _data(2, 30, 40)
    est = estimate_means(truth[judged], truth[judged], truth, 0.95)
    assert float(est.ppipp.weight) > 0.7
    assert float(est.ppipp.width) <= float(est.human.width)
    df = 29 - float(est.ppipp.weight)  # weight == the share used here (no clipping, b ~ 1)
    half = stats.t.ppf(0.975, df) * math.sqrt((1 - 30 / 40) * _floor(float(est.ppipp.value), 30, 40) / 30)
    assert float(est.ppipp.high - est.ppipp.value) == pytest.approx(half, rel=0.05)
    assert float(est.ppipp.low) <= truth.mean() <= float(est.ppipp.high)


def test_a_slope_it_cannot_tell_from_zero_is_not_used():
    """Labels that track the truth only weakly: at 5 judged topics the slope is not significant
    at the interval's level, so PPI++ is the human-only interval (weight 0, n - 1 degrees of
    freedom); with all but a few topics judged the same labels do get a weight."""
    rng = np.random.default_rng(7)
    truth = rng.beta(2, 3, 60)
    llm = np.clip(0.3 * truth + rng.normal(0, 0.15, 60), 0, 1)
    est = estimate_means(truth[:5], llm[:5], llm, 0.95)
    assert float(est.ppipp.weight) == 0.0
    assert (float(est.ppipp.low), float(est.ppipp.high)) == (float(est.human.low), float(est.human.high))
    est = estimate_means(truth[:50], llm[:50], llm, 0.95)
    assert float(est.ppipp.weight) > 0.0


def test_a_used_slope_costs_degrees_of_freedom():
    """With the same cross-fit terms, PPI++'s interval is wider than the fixed-weight formula
    (n - 1 degrees of freedom) would make it: the quantile and the variance use n - 1 - k,
    k in (0, 1] the share of the slopes used."""
    truth, llm, judged = _data(5, 10, 40, noise=0.05)
    y, yhat = truth[judged], llm[judged]
    est = estimate_means(y, yhat, llm, 0.95)
    assert float(est.ppipp.weight) > 0.5
    var_all = llm.var(ddof=1)
    terms = []
    for i in range(10):
        ys, hs = np.delete(y, i), np.delete(yhat, i)
        sums = (ys.sum(), hs.sum(), (hs * hs).sum(), (ys * ys).sum(), (ys * hs).sum())
        terms.append(y[i] - float(shrunk_slope(*sums, 9, var_all)) * (yhat[i] - llm.mean()))
    terms = np.array(terms)
    assert float(est.ppipp.value) == pytest.approx(terms.mean(), abs=1e-12)
    floor = _floor(terms.mean(), 10, 40)
    fixed = stats.t.ppf(0.975, 9) * math.sqrt((1 - 10 / 40) * max(terms.var(ddof=1), floor) / 10)
    half = float(est.ppipp.high - est.ppipp.value)
    # between n - 1 (k = 0) and n - 2 (k = 1) degrees of freedom, strictly
    at_n2 = stats.t.ppf(0.975, 8) * math.sqrt((1 - 10 / 40) * max(terms.var(ddof=1) * 9 / 8, floor) / 10)
    assert fixed < half < at_n2


def test_useless_llm_labels_fall_back_to_the_human_mean():
    truth, _, judged = _data(4, 10, 40)
    constant = np.full(40, 0.3)
    est = estimate_means(truth[judged], constant[judged], constant, 0.95)
    assert float(est.ppipp.weight) == 0.0
    assert float(est.ppipp.low) == pytest.approx(float(est.human.low))
    assert float(est.ppipp.high) == pytest.approx(float(est.human.high))


def test_leading_axes_broadcast_like_separate_calls():
    rng = np.random.default_rng(0)
    human = rng.random((4, 30))
    llm = np.clip(human + rng.normal(0, 0.2, (4, 30)), 0, 1)
    idx = rng.choice(30, 9, replace=False)
    together = estimate_means(human[:, idx], llm[:, idx], llm, 0.9)
    for r in range(4):
        one = estimate_means(human[r, idx], llm[r, idx], llm[r], 0.9)
        assert float(one.ppipp.low) == pytest.approx(float(together.ppipp.low[r]), abs=1e-12)
        assert float(one.human.high) == pytest.approx(float(together.human.high[r]), abs=1e-12)


def test_shrunk_slope_is_the_exact_slope_when_it_is_sure():
    x = np.linspace(0, 1, 20)
    y = 0.7 * x + 0.1
    sums = (y.sum(), x.sum(), (x * x).sum(), (y * y).sum(), (x * y).sum())
    assert float(shrunk_slope(*sums, 20, x.var(ddof=1))) == pytest.approx(0.7)


def test_two_judged_topics_learn_no_slope():
    """Each cross-fit slope would come from one topic, which has no spread: the weight is 0 and
    the interval the human-only one, finite, even when the labels are perfect."""
    truth, _, judged = _data(3, 2, 30)
    est = estimate_means(truth[judged], truth[judged], truth, 0.95)
    assert float(est.ppipp.weight) == 0.0
    assert np.isfinite(float(est.ppipp.width))
    assert float(est.ppipp.width) == pytest.approx(float(est.human.width), abs=1e-12)


@pytest.mark.parametrize(("noise", "most"), [(0.05, 0.8), (0.1, 0.85), (0.2, 1.0)])
def test_coverage_and_gain_over_random_draws(noise, most):
    """Over 1,000 draws of 40 judged topics of 60 (10 runs): PPI++ and human only cover the
    all-topic mean at least as often as 0.93 (95% nominal) and, the closer the LLM labels track
    the human ones, the narrower PPI++ is than human only (down to the floor: what 40 judged
    topics may have missed); the significance rule and the degrees of freedom must not take the
    gain of good labels away."""
    from rubric.evaluate.ppi_study import study

    rng = np.random.default_rng(0)
    human = rng.beta(2, 3, (10, 60))
    llm = np.clip(human + rng.normal(0, noise, human.shape), 0, 1)
    s = study(human, llm, 40, draws=1000, seed=1)
    assert s.mean_coverage("ppi++") >= 0.93 and s.mean_coverage("human") >= 0.93
    assert s.width["ppi++"] <= most * s.width["human"]


def test_near_identical_runs_are_not_called_the_wrong_way():
    """Two runs nearly equal: a a little better on most topics, b much better on one (true
    difference a - b slightly below 0). A t interval of the judged differences calls a > b (the
    wrong sign) in far more than 5% of the draws, since most draws miss the one topic; the floor
    keeps that rate under 5% and covers the true difference."""
    from rubric.evaluate.ppi_study import draw_topics, pair_study

    rng = np.random.default_rng(3)
    a = 0.2 + 0.6 * rng.beta(2, 2, 43)
    b = a - 0.012 + rng.normal(0, 0.004, 43)
    b[0] = a[0] + 0.6
    human = np.vstack([a, b, rng.beta(2, 3, 43)])
    truth = (human[0] - human[1]).mean()
    assert -0.01 < truth < 0
    s = pair_study(human, human, 20, draws=400, seed=0)
    assert s.wrong_sign["ppi++"][0] <= 0.05 and s.wrong_sign["human"][0] <= 0.05
    assert s.coverage["human"][0] >= 0.93 and s.coverage["ppi++"][0] >= 0.93
    # the plain t interval on the same draws
    d = (human[0] - human[1])[draw_topics(43, 20, 400, 0)]
    half = stats.t.ppf(0.975, 19) * np.sqrt((1 - 20 / 43) * d.var(axis=1, ddof=1) / 20)
    assert ((d.mean(axis=1) - half) > 0).mean() > 0.2
