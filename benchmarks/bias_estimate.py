"""Is `evaluate estimate` unbiased under the sampling `verify sample` does? Exact enumeration.

Every one of the C(43, 5) = 962,598 sets of five DL19 topics is equally likely under a uniform
draw without replacement, so the mean of an estimate over all of them is its expectation. For
each of several runs (spread over the leaderboard) and LLM qrels files this prints, per
estimator, the bias (expectation minus the all-topic NIST mean) and the bias as a share of the
mean interval half-width. Human only and PPI (fixed weights) must show 0 up to rounding; PPI++
(a weight learnt from the judged topics) need not.

Usage (from the repository root; about a minute on a shared 2-core machine):
    OMP_NUM_THREADS=1 python benchmarks/bias_estimate.py [--data ../shared/data] [--n 5]
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from math import comb
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import validate_estimate as v  # noqa: E402

from rubric.evaluate.ppi import estimate_means  # noqa: E402

FILES = ("QuestionSelfRatedUnanswerablePromptWithChoices", "NuggetSelfRatedPrompt", "Thomas")
MEASURES = ("nDCG@10", "RR@10")
RUNS = 6


def enumerate_bias(human: np.ndarray, llm: np.ndarray, n: int, chunk: int = 50_000) -> dict:
    """Per estimator: (bias per run, mean half-width per run) over every n-topic set."""
    n_all = human.shape[1]
    sets = np.fromiter(
        (i for c in combinations(range(n_all), n) for i in c), dtype=np.int16, count=comb(n_all, n) * n
    ).reshape(-1, n)
    total = {k: np.zeros(human.shape[0]) for k in ("human", "ppi", "ppi++")}
    half = {k: np.zeros(human.shape[0]) for k in total}
    for start in range(0, len(sets), chunk):
        idx = sets[start : start + chunk]
        y = np.moveaxis(human[:, idx], 0, 1)
        yhat = np.moveaxis(llm[:, idx], 0, 1)
        est = estimate_means(y, yhat, llm[None], 0.95)
        for k, e in (("human", est.human), ("ppi", est.ppi), ("ppi++", est.ppipp)):
            total[k] += e.value.sum(axis=0)
            half[k] += (e.width / 2).sum(axis=0)
    truth = human.mean(axis=1)
    return {k: (total[k] / len(sets) - truth, half[k] / len(sets)) for k in total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--n", type=int, default=5)
    args = parser.parse_args()
    v.MEASURES = MEASURES
    c = v.dl19(args.data)
    order = np.argsort(-c.human[MEASURES[0]].mean(axis=1))
    picked = order[np.linspace(0, len(order) - 1, RUNS).round().astype(int)]
    print(f"DL19, {len(c.topics)} topics, every {args.n}-topic set ({comb(len(c.topics), args.n):,}), runs:")
    print(", ".join(c.runs[i] for i in picked))
    print("\n| LLM qrels | measure | estimator | largest abs bias | largest bias / half-width |")
    print("|---|---|---|---:|---:|")
    for f in FILES:
        for m in MEASURES:
            out = enumerate_bias(c.human[m][picked], c.llm[f][m][picked], args.n)
            for k, (bias, half) in out.items():
                print(f"| {f} | {m} | {k} | {np.abs(bias).max():.2e} | {np.abs(bias / half).max():.4f} |")


if __name__ == "__main__":
    main()
