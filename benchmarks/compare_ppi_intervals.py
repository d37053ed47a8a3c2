"""The PPI++ intervals that were compared before choosing the one in rubric/evaluate/ppi.py.

On the per-topic values of benchmarks/validate_estimate.py (TREC DL19 and DL20, NIST qrels as
the truth, each phase-3 LLM qrels file as the LLM labels, nDCG@10 and AP with ``-l 2``) and the
same seeded draws of n = 5, 10, 20 judged topics, every candidate below keeps the cross-fit
terms ``y_i - lam_(-i) * (yhat_i - mean(yhat_all))`` and changes the weight's shrinkage or the
interval around them:

* ``before``: shrinkage ``1 - se^2/b^2``, ``(1 - n/N) var(terms) / n``, t with n - 1 df;
* ``n-2 df``: the same with n - 2 degrees of freedom;
* ``jackknife``: the jackknife variance of the whole cross-fit estimator (leave one judged
  topic out, refit every weight on the n - 2 others), times ``1 - n/N``; t with n - 1 df;
* ``shrink x4``: shrinkage ``1 - 4 se^2/b^2``;
* ``significance``: shrinkage ``1 - (q se/b)^2``, q the t quantile on m - 2 df at 95%;
* ``n-1-k df``: the old weight, variance divisor and t on n - 1 - k df (k: mean share of the
  fitted slopes used);
* ``now``: the library's ``finite`` mode (significance shrinkage and n - 1 - k df).

Prints, per candidate, over the seeds at n = 10 and 20: the cells (mean coverage over runs)
below 0.93 where human only is at or above 0.93, per seed; the largest coverage loss against
human only; the largest PPI++ / human-only width ratio at each n (docs/validation-log.md).

Usage (from the repository root; about 2 minutes a seed on one core):
    OMP_NUM_THREADS=1 python benchmarks/compare_ppi_intervals.py [--data ../shared/data] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from validate_estimate import dl19, dl20  # noqa: E402

from rubric.evaluate.ppi import estimate_means  # noqa: E402
from rubric.evaluate.ppi_study import draw_topics  # noqa: E402

SIZES = (5, 10, 20)
Q = 1 - 0.05 / 2
MEASURES = ("nDCG@10", "AP")  # the two this comparison was made on (validate_estimate computes five)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    ok = den > 1e-15
    return np.where(ok, num / np.where(ok, den, 1.0), 0.0)


def slope(sums: tuple, m: int, var_all: np.ndarray, penalty: float) -> tuple[np.ndarray, np.ndarray]:
    """(b, weight) from the sums of y, yhat, yhat^2, y^2, y*yhat of m topics, shrunk by
    ``1 - penalty * se^2 / b^2`` (m >= 3 here)."""
    sy, sh, shh, syy, sxy = sums
    sxx, sxy_c, syy_c = shh - sh * sh / m, sxy - sy * sh / m, syy - sy * sy / m
    b = _ratio(sxy_c / (m - 1), var_all)
    se2 = _ratio(np.maximum(syy_c - 2 * b * sxy_c + b * b * sxx, 0.0) / max(m - 2, 1) / (m - 1), var_all)
    keep = np.where(b * b > 1e-15, np.maximum(0.0, 1.0 - penalty * _ratio(se2, b * b)), 0.0)
    return b, np.clip(b * keep, 0.0, 1.0)


def _sums(y: np.ndarray, yhat: np.ndarray) -> tuple:
    return (y, yhat, yhat * yhat, y * y, y * yhat)


def candidates(y: np.ndarray, yhat: np.ndarray, llm: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (estimate, half-width) for draws x runs x n judged values ``y``, ``yhat`` and all
    topics' LLM values ``llm`` (runs x N)."""
    n, n_all = y.shape[-1], llm.shape[-1]
    fpc = 1 - n / n_all
    mu, var_all = llm.mean(-1)[:, None], llm.var(-1, ddof=1)[:, None]
    total = [a.sum(-1, keepdims=True) for a in _sums(y, yhat)]
    loo = tuple(t - a for t, a in zip(total, _sums(y, yhat), strict=True))
    significance = stats.t.ppf(Q, max(n - 3, 1)) ** 2
    out = {}
    for name, penalty in (("before", 1.0), ("shrink x4", 4.0), ("significance", significance)):
        b, w = slope(loo, n - 1, var_all, penalty)
        terms = y - w * (yhat - mu)
        s = np.sqrt(fpc * terms.var(-1, ddof=1) / n)
        out[name] = (terms.mean(-1), stats.t.ppf(Q, n - 1) * s)
        if name == "before":
            out["n-2 df"] = (terms.mean(-1), stats.t.ppf(Q, n - 2) * s)
            df = n - 1 - np.where(b > 0, np.minimum(1.0, _ratio(w, b)), 0.0).mean(-1)
            out["n-1-k df"] = (terms.mean(-1), stats.t.ppf(Q, df) * s * np.sqrt((n - 1) / df))
            out["jackknife"] = (terms.mean(-1), stats.t.ppf(Q, n - 1) * _jackknife(y, yhat, mu, var_all, fpc))
    out["now"] = _library(y, yhat, llm)
    return out


def _jackknife(
    y: np.ndarray, yhat: np.ndarray, mu: np.ndarray, var_all: np.ndarray, fpc: float
) -> np.ndarray:
    """Standard error of the cross-fit estimator by leaving each judged topic j out and refitting:
    term i of replicate j uses the weight learnt without i and j."""
    n = y.shape[-1]
    total = [a.sum(-1, keepdims=True)[..., None] for a in _sums(y, yhat)]
    pairs = tuple(
        t - a[..., :, None] - a[..., None, :] for t, a in zip(total, _sums(y, yhat), strict=True)
    )  # ... x i x j
    _, w = slope(pairs, n - 2, var_all[..., None], 1.0)
    terms = y[..., :, None] - w * (yhat[..., :, None] - mu[..., None])
    terms = np.where(np.eye(n, dtype=bool), 0.0, terms)
    replicates = terms.sum(-2) / (n - 1)
    spread = ((replicates - replicates.mean(-1, keepdims=True)) ** 2).sum(-1)
    return np.sqrt(fpc * (n - 1) / n * spread)


def _library(y: np.ndarray, yhat: np.ndarray, llm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e = estimate_means(y, yhat, llm[None], 0.95).ppipp
    return e.value, (e.high - e.low) / 2


def cell(
    human: np.ndarray, llm: np.ndarray, n: int, seed: int, draws: int = 1000
) -> dict[str, tuple[float, float]]:
    """candidate -> (mean coverage over runs, mean width); ``human`` is the human-only interval."""
    truth = human.mean(1)
    inside: dict[str, list] = {}
    widths: dict[str, list] = {}
    idx = draw_topics(human.shape[1], n, draws, seed)
    for start in range(0, draws, 250):  # the jackknife's draws x runs x n x n in pieces
        part = idx[start : start + 250]
        y, yhat = np.moveaxis(human[:, part], 0, 1), np.moveaxis(llm[:, part], 0, 1)
        human_only = estimate_means(y, yhat, llm[None], 0.95).human
        found: dict[str, tuple] = {"human": (human_only.value, human_only.width / 2)}
        found.update(candidates(y, yhat, llm))
        for name, (value, half) in found.items():
            inside.setdefault(name, []).append(np.abs(value - truth) <= half + 1e-12)
            widths.setdefault(name, []).append(2 * half)
    return {
        k: (float(np.concatenate(inside[k]).mean()), float(np.concatenate(widths[k]).mean())) for k in inside
    }


def _largest_ratio(results: dict, name: str, n: int) -> float:
    return max(r[name][1] / r["human"][1] for (_, k, _), r in results.items() if k == n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    settings = []
    for c in (dl19(args.data), dl20(args.data)):
        for by_measure in c.llm.values():
            for m in MEASURES:
                settings.append((c.human[m], by_measure[m]))
    results = {
        (seed, n, i): cell(h, labels, n, seed)
        for seed in args.seeds
        for n in SIZES
        for i, (h, labels) in enumerate(settings)
    }
    names = [k for k in next(iter(results.values())) if k != "human"]
    print(
        f"| candidate | cells below 0.93 where human only is not (seeds {'/'.join(map(str, args.seeds))}) "
        "| largest loss vs human only | largest width ratio n = 5 / 10 / 20 |"
    )
    print("|---|---|---:|---|")
    for name in names:
        fails, loss = [], 0.0
        for seed in args.seeds:
            count = 0
            for (s, n, _), r in results.items():
                if s == seed and n in (10, 20):
                    count += r[name][0] < 0.93 <= r["human"][0]
                    loss = max(loss, r["human"][0] - r[name][0])
            fails.append(str(count))
        ratios = " / ".join(f"{_largest_ratio(results, name, n):.3f}" for n in SIZES)
        print(f"| {name} | {' / '.join(fails)} | {loss:.3f} | {ratios} |")


if __name__ == "__main__":
    main()
