"""The small-n intervals that were compared before choosing the variance floor of
rubric/evaluate/ppi.py (`variance_floor`), on human-only intervals, which PPI++ reduces to at
weight 0, and on the pair differences.

On the per-topic values of benchmarks/validate_estimate.py (TREC DL19 and DL20, NIST qrels as
the truth, each phase-3 LLM qrels file as the LLM labels, nDCG@10, AP, P@10, RR@10 and R@100
with ``-l 2``) and seeded draws of n = 5, 10, 20 judged topics without replacement:

* ``t``: Student t, ``n - 1`` df, ``(1 - n/N) s^2 / n`` (the interval before);
* ``llm floor``: ``s^2`` at least the LLM values' variance over all topics;
* ``llm prior nu``: ``s^2`` pooled with the LLM values' variance as a prior worth ``nu``
  degrees of freedom (the conjugate normal / inverse-chi^2 update), t on ``n - 1 + nu`` df;
* ``jeffreys``: the Beta(n mean + 1/2, n (1 - mean) + 1/2) interval, the values read as shares
  of successes (the beta-binomial view of a [0, 1] mean; exact for 0/1 values);
* ``betting``: the hedged betting interval for a bounded mean (Waudby-Smith and Ramdas, JRSS-B
  2024), predictable plug-in bets, valid at every n for values in [0, 1] (with replacement, so
  conservative without);
* ``unseen floor`` (chosen): ``s^2`` at least the variance of the share of topics the judged ones
  may all have missed (hypergeometric, at alpha/2), at the far end of the measure's range.

All are clipped to [0, 1]. Bootstrap-t is left out: with no spread among the judged values its
standard error is 0 as the t interval's is, the very failure to fix. Prints per candidate:
cells (collection x LLM qrels x measure x n) whose mean coverage over runs is below 0.93 or
whose worst run is below 0.85, the least mean coverage, the least worst run, the mean width;
and for pairs (``--pairs``; differences, range [-1, 1]): t, the floor with the reach the LLM
labels show, the floor over the whole range (chosen): least mean coverage, largest wrong-sign
rate of any pair, share resolved.

Usage (from the repository root):
    OMP_NUM_THREADS=1 python benchmarks/compare_small_n_intervals.py [--draws 300] [--seed 0] [--pairs]
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

from rubric.evaluate.ppi import unseen_share, variance_floor  # noqa: E402
from rubric.evaluate.ppi_study import draw_topics  # noqa: E402

SIZES = (5, 10, 20)
ALPHA = 0.05


def _t(m, v, n, n_all, df, low=0.0, high=1.0):  # noqa: ANN001, ANN202, PLR0913, PLR0917
    half = stats.t.ppf(1 - ALPHA / 2, df) * np.sqrt((1 - n / n_all) * v / n)
    return np.maximum(m - half, low), np.minimum(m + half, high)


def betting(y: np.ndarray, grid: int = 201) -> tuple[np.ndarray, np.ndarray]:
    """Hedged betting interval (Waudby-Smith and Ramdas 2024, eq. 27 with predictable plug-in
    bets) over a grid of candidate means; values in [0, 1] on the last axis."""
    n = y.shape[-1]
    ms = np.linspace(0, 1, grid)
    i = np.arange(1, n + 1)
    prev_mean = (0.5 + np.cumsum(y, -1)) / (i + 1)
    prev_var = (0.25 + np.cumsum((y - prev_mean) ** 2, -1)) / (i + 1)
    # the bet for observation i uses observations before it only
    var_before = np.concatenate([np.full(y.shape[:-1] + (1,), 0.25), prev_var[..., :-1]], -1)
    lam = np.sqrt(2 * np.log(2 / ALPHA) / (var_before * n))
    keep = np.zeros(y.shape[:-1] + (grid,), dtype=bool)
    for g, m in enumerate(ms):
        up = np.prod(1 + np.minimum(lam, 0.5 / max(m, 1e-9)) * (y - m), -1)
        down = np.prod(1 - np.minimum(lam, 0.5 / max(1 - m, 1e-9)) * (y - m), -1)
        keep[..., g] = 0.5 * up + 0.5 * down < 1 / ALPHA
    low = np.where(keep.any(-1), ms[np.argmax(keep, -1)], 0.0)
    high = np.where(keep.any(-1), ms[grid - 1 - np.argmax(keep[..., ::-1], -1)], 1.0)
    return low - 0.5 / (grid - 1), high + 0.5 / (grid - 1)


def candidates(y: np.ndarray, llm: np.ndarray, n: int, n_all: int) -> dict:
    m, s2 = y.mean(-1), y.var(-1, ddof=1)
    sx2 = llm.var(-1, ddof=1)[None]
    out = {"t": _t(m, s2, n, n_all, n - 1), "llm floor": _t(m, np.maximum(s2, sx2), n, n_all, n - 1)}
    for nu in (1, 4):
        out[f"llm prior {nu}"] = _t(m, ((n - 1) * s2 + nu * sx2) / (n - 1 + nu), n, n_all, n - 1 + nu)
    out["jeffreys"] = (
        stats.beta.ppf(ALPHA / 2, n * m + 0.5, n * (1 - m) + 0.5),
        stats.beta.ppf(1 - ALPHA / 2, n * m + 0.5, n * (1 - m) + 0.5),
    )
    out["betting"] = betting(y)
    floor = variance_floor(m, 0.0, 1.0, unseen_share(n, n_all, 1 - ALPHA))
    out["unseen floor"] = _t(m, np.maximum(s2, floor), n, n_all, n - 1)
    return out


def pair_candidates(y: np.ndarray, llm: np.ndarray, n: int, n_all: int) -> dict:
    m, s2 = y.mean(-1), y.var(-1, ddof=1)
    share = unseen_share(n, n_all, 1 - ALPHA)
    reach = np.abs(llm).max(-1)[None]
    reach = np.where(reach > 0, reach, 1.0)
    return {
        "t": _t(m, s2, n, n_all, n - 1, -1.0, 1.0),
        "floor, reach the LLM shows": _t(
            m, np.maximum(s2, variance_floor(m, -reach, reach, share)), n, n_all, n - 1, -1, 1
        ),
        "floor, whole range": _t(
            m, np.maximum(s2, variance_floor(m, -1.0, 1.0, share)), n, n_all, n - 1, -1, 1
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pairs", action="store_true")
    args = parser.parse_args()
    cells: dict[str, list] = {}
    pair_cells: dict[str, list] = {}
    for c in (dl19(args.data), dl20(args.data)):
        a, b = np.triu_indices(len(c.runs), k=1)
        for measure, human in c.human.items():
            truth = human.mean(1)
            for n in SIZES:
                idx = draw_topics(human.shape[1], n, args.draws, args.seed)
                y = np.moveaxis(human[:, idx], 0, 1)
                for by_measure in c.llm.values():
                    for name, (lo, hi) in candidates(y, by_measure[measure], n, human.shape[1]).items():
                        cov = ((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)).mean(0)
                        cells.setdefault(name, []).append((cov.mean(), cov.min(), float((hi - lo).mean())))
                if not args.pairs:
                    continue
                d = human[a] - human[b]
                yd = np.moveaxis(d[:, idx], 0, 1)
                truth_d = d.mean(1)
                for by_measure in c.llm.values():
                    llm_d = by_measure[measure][a] - by_measure[measure][b]
                    for name, (lo, hi) in pair_candidates(yd, llm_d, n, human.shape[1]).items():
                        cov = ((lo <= truth_d + 1e-12) & (truth_d - 1e-12 <= hi)).mean(0)
                        wrong = (((lo > 0) & (truth_d <= 0)) | ((hi < 0) & (truth_d >= 0))).mean(0)
                        resolved = float(((lo > 0) | (hi < 0)).mean())
                        pair_cells.setdefault(name, []).append((cov.mean(), wrong.max(), resolved))
    print(
        f"| candidate | cells failing (of {len(cells['t'])}) | least mean coverage | least worst run "
        "| mean width |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, xs in cells.items():
        bad = sum(mean < 0.93 or worst < 0.85 for mean, worst, _ in xs)
        print(
            f"| {name} | {bad} | {min(x[0] for x in xs):.3f} | {min(x[1] for x in xs):.3f} "
            f"| {np.mean([x[2] for x in xs]):.3f} |"
        )
    if pair_cells:
        print("\n| pairs: candidate | least mean coverage | largest wrong-sign rate | share resolved |")
        print("|---|---:|---:|---:|")
        for name, xs in pair_cells.items():
            print(
                f"| {name} | {min(x[0] for x in xs):.3f} | {max(x[1] for x in xs):.3f} "
                f"| {np.mean([x[2] for x in xs]):.2f} |"
            )


if __name__ == "__main__":
    main()
