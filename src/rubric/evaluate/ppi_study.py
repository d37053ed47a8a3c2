"""How the estimates of :mod:`rubric.evaluate.ppi` behave on a collection whose every topic has
human labels: draw judged subsets at random, estimate, and compare with the known all-topic mean.

This is how the intervals are validated (coverage of the true mean, widths) and how a campaign
can plan how many topics to judge; the benchmark ``benchmarks/validate_estimate.py`` prints the
table of docs/validation.md with it. Arrays only: per-topic values are computed once, and each
draw is an index set, so a thousand draws of dozens of runs take well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rubric.evaluate.ppi import estimate_means


@dataclass
class Study:
    """Coverage (per run: the share of draws whose interval holds the true mean) and mean widths
    (over draws and runs) of the human-only, PPI and PPI++ intervals with ``n`` judged topics."""

    n: int
    draws: int
    coverage: dict[str, np.ndarray]  # estimator -> per-run coverage
    width: dict[str, float]  # estimator -> mean width

    def min_coverage(self, which: str) -> float:
        return float(self.coverage[which].min())

    def mean_coverage(self, which: str) -> float:
        return float(self.coverage[which].mean())


@dataclass
class PairStudy:
    """The same for every pair's difference (a - b): per pair, the share of draws whose interval
    holds the true difference, the share that puts it on the wrong side of 0 (excludes 0 on the
    side the true difference is not; a true difference of 0 has no wrong side, and any
    resolution of it counts), and the share resolved (the interval excludes 0)."""

    n: int
    draws: int
    truth: np.ndarray  # per pair
    coverage: dict[str, np.ndarray]
    wrong_sign: dict[str, np.ndarray]
    resolved: dict[str, np.ndarray]


def draw_topics(n_all: int, n: int, draws: int, seed: int) -> np.ndarray:
    """``draws`` uniform random subsets of ``n`` of ``n_all`` topics (without replacement), seeded."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((draws, n_all)), axis=1)[:, :n]


def study(
    human: np.ndarray,
    llm: np.ndarray,
    n: int,
    *,
    draws: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Study:
    """Draw ``draws`` judged subsets of ``n`` topics; ``human`` and ``llm`` are runs x topics."""
    human = np.asarray(human, dtype=float)
    llm = np.asarray(llm, dtype=float)
    truth = human.mean(axis=1)  # the all-topic mean on human labels, per run
    idx = draw_topics(human.shape[1], n, draws, seed)
    y = np.moveaxis(human[:, idx], 0, 1)  # draws x runs x n
    yhat = np.moveaxis(llm[:, idx], 0, 1)
    est = estimate_means(y, yhat, llm[None], confidence)
    coverage = {}
    width = {}
    for name, e in (("human", est.human), ("ppi", est.ppi), ("ppi++", est.ppipp)):
        inside = (e.low <= truth + 1e-12) & (truth - 1e-12 <= e.high)
        coverage[name] = inside.mean(axis=0)
        width[name] = float(e.width.mean())
    return Study(n, draws, coverage, width)


def pair_study(
    human: np.ndarray,
    llm: np.ndarray,
    n: int,
    *,
    draws: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    chunk: int = 100,
) -> PairStudy:
    """:func:`study` for the differences of every pair of runs (``evaluate estimate --pairs``),
    on the same draws as :func:`study` with the same ``seed``; ``chunk`` draws at a time keep the
    memory small (666 pairs of DL19)."""
    human = np.asarray(human, dtype=float)
    llm = np.asarray(llm, dtype=float)
    a, b = np.triu_indices(human.shape[0], k=1)
    h, x = human[a] - human[b], llm[a] - llm[b]
    truth = h.mean(axis=1)
    idx = draw_topics(human.shape[1], n, draws, seed)
    names = ("human", "ppi", "ppi++")
    inside = {k: np.zeros(len(a)) for k in names}
    wrong = {k: np.zeros(len(a)) for k in names}
    resolved = {k: np.zeros(len(a)) for k in names}
    for start in range(0, draws, chunk):
        part = idx[start : start + chunk]
        y = np.moveaxis(h[:, part], 0, 1)  # draws x pairs x n
        yhat = np.moveaxis(x[:, part], 0, 1)
        est = estimate_means(y, yhat, x[None], confidence, limits=(-1.0, 1.0))
        for name, e in zip(names, (est.human, est.ppi, est.ppipp), strict=True):
            inside[name] += ((e.low <= truth + 1e-12) & (truth - 1e-12 <= e.high)).sum(axis=0)
            above, below = e.low > 0, e.high < 0
            wrong[name] += ((above & (truth <= 0)) | (below & (truth >= 0))).sum(axis=0)
            resolved[name] += (above | below).sum(axis=0)
    return PairStudy(
        n,
        draws,
        truth,
        {k: v / draws for k, v in inside.items()},
        {k: v / draws for k, v in wrong.items()},
        {k: v / draws for k, v in resolved.items()},
    )
