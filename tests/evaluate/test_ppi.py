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


def _direct(y, yhat, llm_all, confidence):
    """The finite mode written out loop by loop, with scipy's t quantile."""
    n, n_all = len(y), len(llm_all)
    mu = sum(llm_all) / n_all
    q = stats.t.ppf(1 - (1 - confidence) / 2, n - 1)
    fpc = 1 - n / n_all

    mean_all = sum(llm_all) / n_all
    var_all = sum((h - mean_all) ** 2 for h in llm_all) / (n_all - 1)

    def slope(ys, hs):
        m = len(ys)
        my, mh = sum(ys) / m, sum(hs) / m
        sxy = sum((a - my) * (h - mh) for a, h in zip(ys, hs, strict=True)) / max(m - 1, 1)
        if var_all <= 1e-15:
            return 0.0
        b = sxy / var_all
        resid = sum((a - my - b * (h - mh)) ** 2 for a, h in zip(ys, hs, strict=True)) / max(m - 2, 1)
        se2 = resid / (max(m - 1, 1) * var_all)
        keep = max(0.0, 1 - se2 / (b * b)) if b != 0 else 0.0
        return min(1.0, max(0.0, b * keep))

    out = {}
    census = n == n_all  # every topic judged: the human mean, no weight
    for name, rule in (("human", lambda ys, hs: 0.0), ("ppi", lambda ys, hs: 1.0), ("ppipp", slope)):
        if census and name == "ppipp":
            rule = lambda ys, hs: 0.0  # noqa: E731
        terms = []
        for i in range(n):  # cross-fit: topic i's weight is learnt without topic i
            ys = [a for j, a in enumerate(y) if j != i]
            hs = [h for j, h in enumerate(yhat) if j != i]
            terms.append(y[i] - rule(ys, hs) * (yhat[i] - mu))
        value = sum(terms) / n
        var = fpc * sum((t - value) ** 2 for t in terms) / (n - 1) / n
        out[name] = (value, value - q * math.sqrt(var), value + q * math.sqrt(var))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [2, 5, 12, 40])
def test_finite_mode_equals_the_direct_formula(seed, n):
    truth, llm, judged = _data(seed, n, 40, noise=0.02 + 0.1 * seed)
    y, yhat = list(truth[judged]), list(llm[judged])
    est = estimate_means(truth[judged], llm[judged], llm, 0.95)
    ref = _direct(y, yhat, list(llm), 0.95)
    for name in ("human", "ppi", "ppipp"):
        e = getattr(est, name)
        assert (float(e.value), float(e.low), float(e.high)) == pytest.approx(ref[name], abs=1e-9)


def test_fixed_weight_variance_is_the_textbook_one():
    """For a fixed weight the jackknife is exactly (1 - n/N) s^2 / n, the SRSWOR variance."""
    truth, llm, judged = _data(3, 15, 45)
    est = estimate_means(truth[judged], llm[judged], llm, 0.95)
    d = truth[judged] - llm[judged]
    half = stats.t.ppf(0.975, 14) * math.sqrt((1 - 15 / 45) * d.var(ddof=1) / 15)
    assert float(est.ppi.high - est.ppi.value) == pytest.approx(half, abs=1e-12)
    half = stats.t.ppf(0.975, 14) * math.sqrt((1 - 15 / 45) * truth[judged].var(ddof=1) / 15)
    assert float(est.human.high - est.human.value) == pytest.approx(half, abs=1e-12)


def test_every_topic_judged_gives_the_exact_mean():
    truth, llm, _ = _data(1, 30, 30)
    est = estimate_means(truth, llm, llm, 0.95)
    for e in (est.human, est.ppi, est.ppipp):
        assert float(e.value) == pytest.approx(truth.mean(), abs=1e-12)
        assert float(e.width) == pytest.approx(0.0, abs=1e-12)


def test_perfect_llm_labels_give_weight_one_and_no_width():
    truth, _, judged = _data(2, 8, 40)
    est = estimate_means(truth[judged], truth[judged], truth, 0.95)
    assert float(est.ppipp.weight) == pytest.approx(1.0)
    assert float(est.ppipp.value) == pytest.approx(truth.mean(), abs=1e-12)
    assert float(est.ppipp.width) == pytest.approx(0.0, abs=1e-9)


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
