"""Prediction-powered means: LLM labels on every topic, human labels on a random few.

The numbers behind `rubric evaluate estimate`, on arrays of per-topic values (numpy only, so a
thousand draws of 37 runs take milliseconds). The unit is a topic. For one run and measure:

* ``y``: the measure on the human labels of the ``n`` judged topics;
* ``yhat``: the measure on the LLM labels of the same topics;
* ``yhat_all``: the measure on the LLM labels of all ``N`` topics (the judged ones included).

The target is the mean of the human values over the ``N`` topics. With a weight ``lam`` the
estimate is ``lam * mean(yhat_all) + mean(y - lam * yhat)``: ``lam = 0`` is the human-only mean,
``lam = 1`` is PPI (Angelopoulos et al., Science 2023), the tuned ``lam`` is PPI++ (Angelopoulos,
Duchi and Zrnic, 2023). Every topic's LLM value is known, so ``mean(yhat_all)`` is exact and
the only randomness is which topics were judged.

Two modes:

``finite`` (the default): the judged topics are a simple random sample *without replacement*
from the ``N`` topics, and the target is their finite mean. Under that design the estimate is
unbiased for any fixed ``lam`` (it is the difference estimator of survey sampling), and its
variance is ``(1 - n/N) * S^2 / n`` with ``S^2`` the variance of ``y - lam * yhat`` over the
topics. For a fixed ``lam`` the interval uses Student's t with ``n - 1`` degrees of freedom,
since ``n`` is small, and that finite-population correction.

The PPI++ weight is estimated from the same few judged topics, and using it on the topics it
was learnt from costs coverage (the textbook variance at the fitted weight covered the true mean
only 91% of the time at 95% nominal on TREC DL). Three things keep the interval honest:

* The weight is **cross-fit** (as in cross-prediction-powered inference, Zrnic and Candes
  2024): topic ``i``'s term is ``y_i - lam_(-i) * (yhat_i - mean(yhat_all))`` with ``lam_(-i)``
  learnt without topic ``i``, so no term is fitted to itself; the estimate is the mean of the
  terms.
* The weight is **shrunk by its own evidence** (:func:`shrunk_slope`): the LLM values' variance
  over all topics is known, so only their covariance with the human values is estimated, and
  the slope ``b`` with standard error ``se`` becomes ``lam = b * max(0, 1 - (q / t)^2)``,
  ``t = b / se``, ``q`` the t quantile (``m - 2`` degrees of freedom for a slope from ``m``
  topics) at the interval's own confidence; clipped to [0, 1]. A slope the judged topics
  cannot tell from 0 at that level is not used at all (the human-only estimate), and one they
  pin down is used almost whole. (The loss-minimising ``1 - se^2 / b^2`` used before spent a
  noisy weight whenever ``t > 1``.)
* The fitted weight **spends degrees of freedom**: the variance is ``(1 - n/N) * sum((terms -
  mean)^2) / ((n - 1 - k) * n)`` with a t quantile on ``n - 1 - k`` degrees of freedom, where
  ``k`` in [0, 1] is the mean share ``lam_(-i) / b_(-i)`` of the fitted slope that the terms
  use: ``k = 0`` (weight 0) is exactly the human-only interval, ``k = 1`` the regression
  estimator's ``n - 2`` of survey sampling (Cochran, Sampling Techniques, 7.3). The
  cross-fit terms are not independent and the weight's own noise is not in ``var(terms)``;
  this is what pays for it.

Why these and not others (docs/validation-log.md has the numbers, seeds 0, 1 and 2): with the old
weight, ``n - 1`` degrees of freedom cost up to 1.8 points of coverage against human only; a
fixed ``n - 2`` nearly fixes coverage but makes PPI++ up to 16% wider than human only at ``n = 5``; a
jackknife of the whole cross-fit estimator (leave one judged topic out, refit everything) is
itself noisy and up to 12% wider; a weight fixed at the best all-topic slope still lost
coverage on skewed AP values, so the rest is the t interval's own small-sample limit, which
human only shares. The significance shrinkage plus the ``k`` degrees of freedom kept PPI++
within 1.003 x human only's width and never more than 0.013 below its coverage.

**Small n.** A t interval from values that happen to agree (five judged topics all with RR@10 =
1) has zero width, and skewed, discrete values undercover at n = 5. In the ``finite`` mode the
topic variance is therefore never below :func:`variance_floor`: the variance of the share of
topics that ``n`` judged ones may all have missed (:func:`unseen_share`, hypergeometric, at the
interval's ``alpha / 2``) placed at the far end of the measure's range, and every interval is
clipped to that range. Only a census has zero width. PPI++'s cross-fit weight is not exactly
unbiased under sampling without replacement (``lam_(-i)`` depends on the other judged topics,
and given them topic ``i`` comes from the rest); enumeration of every five-topic set of DL19
puts the bias below 0.1% of the half-width (``benchmarks/bias_estimate.py``). Human only and PPI
are exactly unbiased.

``ppi_py``: exactly `ppi_py.ppi_mean_ci` (normal quantile, no finite-population correction,
population standard deviations) with its PPI++ weight, taking the judged topics as the labelled
set and the *unjudged* topics as the unlabelled set, as that package treats two independent
samples. It is here so that the arithmetic can be checked against the reference
implementation (no floor, no clipping); the ``finite`` mode is the one whose intervals cover
the finite mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MODES = ("finite", "ppi_py")
"""How intervals are computed (see the module docstring)."""


@dataclass
class Estimate:
    """A point estimate with its interval; arrays over any leading axes (draws, runs)."""

    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    weight: np.ndarray  # the lam used (0: human only; 1: PPI)

    @property
    def width(self) -> np.ndarray:
        return self.high - self.low


@dataclass
class Estimates:
    """Every estimate of one or many (run, measure) cells, on the same judged topics."""

    llm: np.ndarray  # LLM-only mean over all topics (no interval: the LLM labels are taken as true)
    human: Estimate  # human-only mean over the judged topics
    ppi: Estimate  # lam = 1
    ppipp: Estimate  # lam tuned (PPI++)
    n: int
    n_all: int


def _upper(confidence: float) -> float:
    return 1 - (1 - confidence) / 2


def _normal_quantile(confidence: float) -> float:
    """``ppi_py``'s quantile (the ``finite`` mode's t quantiles are in :func:`_finite`)."""
    from scipy import stats

    return float(stats.norm.ppf(_upper(confidence)))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0 (no spread: nothing to learn)."""
    ok = den > 1e-15
    return np.where(ok, num / np.where(ok, den, 1.0), 0.0)


def _slope(sy, sh, shh, syy, sxy, m: int, var_all, confidence: float):  # noqa: ANN001, ANN202, PLR0917 - the formula's sums, in order
    """The slope ``b`` and the shrunk weight of :func:`shrunk_slope` (both arrays)."""
    from scipy import stats

    if m < 2:  # one topic has no spread: no slope to learn (and none to pay for)
        zero = np.zeros(np.broadcast_shapes(np.shape(sy), np.shape(var_all)))
        return zero, zero
    sxx = shh - sh * sh / m
    sxy_c = sxy - sy * sh / m
    syy_c = syy - sy * sy / m
    b = _ratio(sxy_c / (m - 1), var_all)
    residual = np.maximum(syy_c - 2 * b * sxy_c + b * b * sxx, 0.0) / max(m - 2, 1)
    se2 = _ratio(residual / (m - 1), var_all)
    q2 = float(stats.t.ppf(_upper(confidence), max(m - 2, 1))) ** 2
    # a slope of (numerically) 0 has no evidence at all: nothing of it is kept
    keep = np.where(b * b > 1e-15, np.maximum(0.0, 1.0 - q2 * _ratio(se2, b * b)), 0.0)
    return b, np.clip(b * keep, 0.0, 1.0) + 0.0  # + 0.0: no -0.0 in reports


def shrunk_slope(sy, sh, shh, syy, sxy, m, var_all, *, confidence: float = 0.95) -> np.ndarray:  # noqa: ANN001, PLR0917 - the formula's sums, in order
    """The ``finite`` PPI++ weight from the sums of ``m`` judged topics' ``y``, ``yhat``,
    ``yhat^2``, ``y^2`` and ``y * yhat``, and the variance of ``yhat`` over all topics.

    The weight that minimises the variance is ``S_xy / S_x^2`` over the topics. ``S_x^2``, the
    LLM values' variance, is known exactly (every topic has LLM labels), so only the covariance
    is estimated (divisor ``m - 1``, unbiased under sampling without replacement). Its standard
    error ``se`` comes from the residual variance (``m - 2`` degrees of freedom). The slope is
    shrunk by its evidence, ``b * max(0, 1 - (q * se / b)^2)`` with ``q`` the t quantile on
    ``m - 2`` degrees of freedom at ``confidence``: 0 unless the slope is distinguishable from
    0 at the interval's own level, nearly ``b`` when it is sure; clipped to [0, 1].
    """
    return _slope(sy, sh, shh, syy, sxy, m, var_all, confidence)[1]


def tuned_weight(
    y: np.ndarray, yhat: np.ndarray, yhat_all: np.ndarray, mode: str = "finite", *, confidence: float = 0.95
) -> np.ndarray:
    """The PPI++ weight along the last axis, in [0, 1].

    ``finite``: :func:`shrunk_slope` of the judged topics (``yhat_all``: all topics).
    ``ppi_py``: that package's weight, ``cov(y, yhat)`` (divisor n) over ``(1 + n / N_u) *
    var(yhat and yhat_unlabelled)`` (divisor n + N_u - 1), clipped.
    """
    if mode == "finite":
        sums = (y.sum(-1), yhat.sum(-1), (yhat * yhat).sum(-1), (y * y).sum(-1), (y * yhat).sum(-1))
        return shrunk_slope(*sums, y.shape[-1], yhat_all.var(-1, ddof=1), confidence=confidence)
    n = y.shape[-1]
    cov = ((y - y.mean(-1, keepdims=True)) * (yhat - yhat.mean(-1, keepdims=True))).sum(-1) / n
    pooled = np.concatenate([yhat, yhat_all], axis=-1)
    var = pooled.var(axis=-1, ddof=1) * (1 + n / yhat_all.shape[-1])
    return np.clip(_ratio(cov, var), 0.0, 1.0)


def unseen_share(n: int, n_all: int, confidence: float) -> float:
    """The largest share of ``n_all`` topics that ``n`` drawn without replacement can all miss
    with probability above ``(1 - confidence) / 2``: the smallest ``K / n_all`` with
    ``C(n_all - K, n) / C(n_all, n) <= (1 - confidence) / 2`` (hypergeometric; 0 for a census).

    ``n`` topics that agree cannot rule out that this share of the topics lies elsewhere: 0.51
    of 43 topics for 5 judged at 95%, 0.28 for 10, 0.14 for 20 (with replacement it would be
    ``1 - (alpha/2)^(1/n)``, a little more)."""
    import math

    alpha = (1 - confidence) / 2
    total = math.comb(n_all, n)
    for k in range(n_all - n + 1):
        if math.comb(n_all - k, n) <= alpha * total:
            return k / n_all
    return (n_all - n + 1) / n_all


def variance_floor(value: np.ndarray, low: np.ndarray, high: np.ndarray, share: float) -> np.ndarray:
    """The least topic variance an interval may assume: a ``share`` of the topics (the
    :func:`unseen_share` the judged ones may all have missed) at the farther end of ``[low, high]``
    from ``value``, the rest at ``value``: ``share * (1 - share) * d^2``. It is what keeps five
    judged topics that share one value (RR@10 is 1 on most topics) from a zero-width interval,
    and what keeps a difference that is 0 on most topics from looking certain."""
    d = np.maximum(value - low, high - value)
    return share * (1 - share) * d * d


def _finite(  # noqa: PLR0913, PLR0917 - the formula's inputs, in order
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_all: np.ndarray,
    confidence: float,
    lam: np.ndarray | None,
    limits: tuple[np.ndarray, np.ndarray],
) -> Estimate:
    """The ``finite`` estimate with a fixed weight ``lam`` (variance ``(1 - n/N) * var(terms) /
    n``, t quantile on ``n - 1`` degrees of freedom), or (``None``) PPI++: the cross-fit weights
    (each topic's term ``y_i - lam_(-i) * (yhat_i - mean(yhat_all))`` with the weight learnt
    without topic ``i``) and ``n - 1 - k`` degrees of freedom, ``k`` the mean share of the
    fitted slopes used (module docstring). The reported weight is the mean of the cross-fit
    weights. The topic variance is never below :func:`variance_floor` over ``limits`` (the range
    a topic's value may take), and the interval is clipped to them."""
    from scipy import stats

    n, n_all = y.shape[-1], yhat_all.shape[-1]
    mu = yhat_all.mean(-1)
    df = np.full(y.shape[:-1], n - 1.0)
    if lam is None:
        # cross-fit: each judged topic's term uses the weight learnt without it
        sy, sh = y.sum(-1, keepdims=True), yhat.sum(-1, keepdims=True)
        shh, syy, sxy = (
            (yhat * yhat).sum(-1, keepdims=True),
            (y * y).sum(-1, keepdims=True),
            (y * yhat).sum(-1, keepdims=True),
        )
        var_all = yhat_all.var(-1, ddof=1)[..., None]
        slopes, weights = _slope(
            sy - y, sh - yhat, shh - yhat * yhat, syy - y * y, sxy - y * yhat, n - 1, var_all, confidence
        )
        if n == n_all:  # a census: the human mean is exact, nothing is left to predict
            weights = np.zeros_like(weights)
        weight = weights.mean(-1)
        # the share of each fitted slope that its term uses (<= 1: shrunk, or clipped at 1)
        used = np.where(slopes > 0, np.minimum(1.0, _ratio(weights, slopes)), 0.0)
        df = df - used.mean(-1)
    else:
        weight = np.broadcast_to(np.asarray(lam, dtype=float), y.shape[:-1])
        weights = weight[..., None]
    terms = y - weights * (yhat - mu[..., None])
    value = terms.mean(-1)
    squares = ((terms - value[..., None]) ** 2).sum(-1)
    floor = variance_floor(value, *limits, unseen_share(n, n_all, confidence))
    q = stats.t.ppf(_upper(confidence), df)
    half = q * np.sqrt((1 - n / n_all) * np.maximum(squares / df, floor) / n)
    low, high = np.maximum(value - half, limits[0]), np.minimum(value + half, limits[1])
    return Estimate(value, low, high, np.array(weight, dtype=float))


def _ppi_py(y: np.ndarray, yhat: np.ndarray, unlabelled: np.ndarray, q: float, lam: np.ndarray) -> Estimate:
    """``ppi_py.ppi_mean_ci`` with weight ``lam`` (normal quantile ``q``, population deviations)."""
    n, n_u = y.shape[-1], unlabelled.shape[-1]
    rectifier = y - lam[..., None] * yhat
    value = lam * unlabelled.mean(-1) + rectifier.mean(-1)
    half = q * np.sqrt((lam * unlabelled.std(-1)) ** 2 / n_u + rectifier.var(-1) / n)
    return Estimate(value, value - half, value + half, np.array(lam, dtype=float))


def estimate_means(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_all: np.ndarray,
    confidence: float = 0.95,
    mode: str = "finite",
    *,
    limits: tuple = (0.0, 1.0),
) -> Estimates:
    """LLM-only, human-only, PPI and PPI++ estimates of the all-topic human mean.

    Arrays hold topics on their last axis (``y`` and ``yhat``: the ``n`` judged topics, in the
    same order; ``yhat_all``: all ``N`` topics in the ``finite`` mode, the ``N - n`` unjudged
    ones in the ``ppi_py`` mode); leading axes (draws, runs) broadcast. Callers check the
    inputs (:func:`check_sizes`).

    ``finite`` intervals are clipped to ``limits``, the range a topic's value may take (``(0,
    1)`` for every mean measure of trec_eval, ``(-1, 1)`` for a difference of two runs), and
    their topic variance is at least :func:`variance_floor` over it. ``ppi_py`` has neither.
    """
    y, yhat, yhat_all = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    shape = np.broadcast_shapes(y.shape[:-1], yhat.shape[:-1], yhat_all.shape[:-1])
    y = np.broadcast_to(y, (*shape, y.shape[-1]))
    yhat = np.broadcast_to(yhat, (*shape, yhat.shape[-1]))
    yhat_all = np.broadcast_to(yhat_all, (*shape, yhat_all.shape[-1]))
    n = y.shape[-1]
    zero, one = np.zeros(shape), np.ones(shape)
    if mode == "finite":
        lim = (np.asarray(limits[0], dtype=float), np.asarray(limits[1], dtype=float))
        return Estimates(
            llm=yhat_all.mean(-1),
            human=_finite(y, yhat, yhat_all, confidence, zero, lim),
            ppi=_finite(y, yhat, yhat_all, confidence, one, lim),
            ppipp=_finite(y, yhat, yhat_all, confidence, None, lim),
            n=n,
            n_all=yhat_all.shape[-1],
        )
    q = _normal_quantile(confidence)
    lam = tuned_weight(y, yhat, yhat_all, mode)
    return Estimates(
        llm=np.concatenate([yhat, yhat_all], axis=-1).mean(-1),
        human=_ppi_py(y, yhat, yhat_all, q, zero),
        ppi=_ppi_py(y, yhat, yhat_all, q, one),
        ppipp=_ppi_py(y, yhat, yhat_all, q, lam),
        n=n,
        n_all=n + yhat_all.shape[-1],
    )


def check_sizes(n: int, n_all: int, confidence: float) -> None:
    """What the estimates need: 2 or more judged topics of the ``n_all``, a confidence in (0, 1)."""
    from rubric.errors import UserError

    if not 0 < confidence < 1:
        raise UserError(f"confidence: {confidence} is not between 0 and 1 (exclusive)")
    if n < 2:
        raise UserError(
            f"{n} judged topic{'s' if n != 1 else ''}: an interval needs human judgments "
            "for at least 2 topics"
        )
    if n > n_all:
        raise UserError(f"{n} judged topics but only {n_all} topics with LLM labels")
