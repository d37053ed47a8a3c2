"""Validate `rubric evaluate estimate` on real TREC data: do its intervals cover the NIST mean?

For TREC DL 2019 (NIST qrels as the truth, the 37 official runs) and TREC DL 2020 (the 15
rank_llm runs), with each released phase-3 LLM qrels file of the original workbench as the LLM
labels, and nDCG@10, AP, P@10, RR@10 (MS MARCO's MRR@10) and R@100, all with ``-l 2`` (nDCG
uses the raw grades): per-topic values are computed once with trec_eval, then for n = 5, 10, 20
judged topics and each seed, ``--draws`` uniform draws of n topics without replacement (as
`verify sample` draws): the coverage of each run's all-topic NIST mean by the PPI++ and
human-only 95% intervals (mean over runs, and the worst run) and their mean widths; and on
``--pair-draws`` of the same draws, every pair of runs' difference: its coverage (mean over
pairs), the largest wrong-sign rate of any pair (the interval excludes 0 on the side the true
difference is not; pooled over the seeds), and the share of pairs resolved.

Prints a Markdown table, one row per collection, measure and n, the worst over the LLM qrels
files and seeds (``--full``: one row per file and seed); docs/validation.md holds its output.
Also used by tests/validation/test_estimate_real.py.

Usage (from the repository root; about 15 minutes on a shared 2-core machine, most of it the
666 pairs of DL19):
    OMP_NUM_THREADS=1 python benchmarks/validate_estimate.py [--data ../shared/data] \
        [--draws 1000] [--pair-draws 200] [--seeds 0 1 2] [--full]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rubric.data.run_columns import read_run_columns  # noqa: E402
from rubric.data.trec import read_qrels  # noqa: E402
from rubric.evaluate.estimate import topic_values  # noqa: E402
from rubric.evaluate.measures import parse_measures  # noqa: E402
from rubric.evaluate.ppi_study import pair_study, study  # noqa: E402
from rubric.evaluate.treceval import Evaluator, TrecEvalSettings  # noqa: E402

MEASURES = ("nDCG@10", "AP", "P@10", "RR@10", "R@100")
LEVEL = 2
SIZES = (5, 10, 20)
PHASE3 = "rubric-workbench/rubric-evaluation/phase3-qrels"


@dataclass
class Collection:
    """Per-topic values (runs x topics) on the NIST qrels and on each LLM qrels file."""

    name: str
    runs: list[str]
    topics: list[str]
    human: dict[str, np.ndarray]  # measure -> runs x topics
    llm: dict[str, dict[str, np.ndarray]]  # qrels file -> measure -> runs x topics


def _values(qrels: dict, runs: list, topics: list[str]) -> dict[str, np.ndarray]:
    evaluator = Evaluator(qrels, parse_measures(list(MEASURES)), TrecEvalSettings(level=LEVEL, complete=True))
    return topic_values(evaluator, runs, topics).values


def load_collection(name: str, nist: Path, run_paths: dict[str, Path], llm_dir: Path) -> Collection:
    """Topics: those the NIST qrels judge (every LLM file labels them all, checked)."""
    human_qrels = {q: d for q, d in read_qrels(nist).items() if d}
    topics = sorted(human_qrels)
    runs = [read_run_columns(path, name=run, queries=frozenset(topics)) for run, path in run_paths.items()]
    # only the judged topics are kept, so a run of 200 topics costs little memory
    human = _values(human_qrels, runs, topics)
    llm = {}
    for path in sorted(llm_dir.glob("*.qrel")):
        qrels = {q: d for q, d in read_qrels(path).items() if d and q in human_qrels}
        missing = set(topics) - set(qrels)
        if missing:
            raise SystemExit(f"{path}: no LLM labels for topics {sorted(missing)}")
        llm[path.stem] = _values(qrels, runs, topics)
    return Collection(name, list(run_paths), topics, human, llm)


def dl19(data: Path) -> Collection:
    runs = {
        p.name.removeprefix("input.").removesuffix(".gz"): p
        for p in sorted((data / "naghmefarzi-llmjudge/dl19-runs").glob("input.*.gz"))
    }
    return load_collection(
        "DL19", data / "anserini-tools/qrels.dl19-passage.txt", runs, data / PHASE3 / "dl19"
    )


def dl20(data: Path) -> Collection:
    """The 15 rank_llm runs on DL20: 5 first-stage retrievers, each reranked from its top 20 and top 100."""
    runs = {}
    for path in sorted((data / "rank_llm/retrieve_results").glob("*/trec_results_dl20.txt")):
        runs[path.parent.name] = path
    for path in sorted((data / "rank_llm/rerank_results").glob("*/*_dl20_*.txt")):
        depth = "100" if "_4096_100_" in path.name else "20"
        runs[f"{path.parent.name}+rankvicuna{depth}"] = path
    return load_collection(
        "DL20", data / "anserini-tools/qrels.dl20-passage.txt", runs, data / PHASE3 / "dl20"
    )


@dataclass
class Line:
    """One cell: a collection, LLM qrels file, measure, n and seed."""

    collection: str
    qrels: str
    measure: str
    n: int
    seed: int
    cov_ppipp: tuple[float, float]  # worst run, mean over runs
    cov_human: tuple[float, float]
    width_ppipp: float
    width_human: float
    pair_cov: float | None = None  # PPI++, mean over pairs
    pair_wrong: np.ndarray | None = None  # PPI++, per pair: wrong-sign count
    pair_resolved: float | None = None
    pair_draws: int = 0


def rows(
    c: Collection,
    draws: int,
    seeds: tuple[int, ...] = (0,),
    sizes: tuple[int, ...] = SIZES,
    pair_draws: int = 0,
    measures: tuple[str, ...] = MEASURES,
) -> list[Line]:
    out = []
    for qrels, by_measure in c.llm.items():
        for m in measures:
            for n in sizes:
                for seed in seeds:
                    s = study(c.human[m], by_measure[m], n, draws=draws, seed=seed)
                    line = Line(
                        c.name,
                        qrels,
                        m,
                        n,
                        seed,
                        (s.min_coverage("ppi++"), s.mean_coverage("ppi++")),
                        (s.min_coverage("human"), s.mean_coverage("human")),
                        s.width["ppi++"],
                        s.width["human"],
                    )
                    if pair_draws:
                        p = pair_study(c.human[m], by_measure[m], n, draws=pair_draws, seed=seed)
                        line.pair_cov = float(p.coverage["ppi++"].mean())
                        line.pair_wrong = p.wrong_sign["ppi++"] * pair_draws
                        line.pair_resolved = float(p.resolved["ppi++"].mean())
                        line.pair_draws = pair_draws
                    out.append(line)
    return out


def summary(lines: list[Line]) -> list[dict]:
    """Per collection, measure and n: the worst over LLM qrels files and seeds; the pairs'
    wrong-sign rates pooled over the seeds (per file), then the largest over pairs and files."""
    groups: dict[tuple, list[Line]] = {}
    for x in lines:
        groups.setdefault((x.collection, x.measure, x.n), []).append(x)
    out = []
    for (col, m, n), xs in groups.items():
        row = {
            "collection": col,
            "measure": m,
            "n": n,
            "ppi++ mean": min(x.cov_ppipp[1] for x in xs),
            "ppi++ worst run": min(x.cov_ppipp[0] for x in xs),
            "human mean": min(x.cov_human[1] for x in xs),
            "human worst run": min(x.cov_human[0] for x in xs),
            "ratio": max(x.width_ppipp / x.width_human for x in xs),
            "human width": float(np.mean([x.width_human for x in xs])),
        }
        if xs[0].pair_wrong is not None:
            pooled: dict[str, list[Line]] = {}
            for x in xs:
                pooled.setdefault(x.qrels, []).append(x)
            wrong = max(
                float(np.max(sum(x.pair_wrong for x in ys) / sum(x.pair_draws for x in ys)))  # type: ignore[misc]
                for ys in pooled.values()
            )
            row |= {
                "pair cov": min(x.pair_cov for x in xs),  # type: ignore[type-var]
                "wrong sign": wrong,
                "resolved": float(np.mean([x.pair_resolved for x in xs])),
            }
        out.append(row)
    return out


def markdown(lines: list[Line]) -> str:
    rows_ = summary(lines)
    pairs = "pair cov" in rows_[0]
    head = (
        "| collection | measure | n | PPI++ coverage: mean over runs / worst run "
        "| human only: mean / worst run | PPI++ / human-only width (largest) | human-only width |"
    )
    rule = "|---|---|---:|---:|---:|---:|---:|"
    if pairs:
        head += " pairs: coverage (mean) | pairs: largest wrong-sign rate | pairs resolved |"
        rule += "---:|---:|---:|"
    body = ""
    for r in rows_:
        body += (
            f"| {r['collection']} | {r['measure']} | {r['n']} "
            f"| {r['ppi++ mean']:.3f} / {r['ppi++ worst run']:.3f} "
            f"| {r['human mean']:.3f} / {r['human worst run']:.3f} "
            f"| {r['ratio']:.3f} | {r['human width']:.3f} |"
        )
        if pairs:
            body += f" {r['pair cov']:.3f} | {r['wrong sign']:.3f} | {r['resolved']:.2f} |"
        body += "\n"
    return head + "\n" + rule + "\n" + body


def full(lines: list[Line]) -> str:
    head = (
        "| collection | LLM qrels | measure | n | seed | PPI++ coverage mean / worst run "
        "| human only mean / worst run | PPI++ width | human-only width |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|\n"
    )
    return head + "".join(
        f"| {x.collection} | {x.qrels} | {x.measure} | {x.n} | {x.seed} "
        f"| {x.cov_ppipp[1]:.3f} / {x.cov_ppipp[0]:.3f} "
        f"| {x.cov_human[1]:.3f} / {x.cov_human[0]:.3f} | {x.width_ppipp:.4f} | {x.width_human:.4f} |\n"
        for x in lines
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--pair-draws", type=int, default=200, help="0: no pairs")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--full", action="store_true", help="one row per LLM qrels file and seed")
    args = parser.parse_args()
    start = time.perf_counter()
    collections = [dl19(args.data), dl20(args.data)]
    loaded = time.perf_counter()
    seeds = tuple(args.seeds)
    lines = [x for c in collections for x in rows(c, args.draws, seeds, pair_draws=args.pair_draws)]
    done = time.perf_counter()
    for c in collections:
        print(
            f"{c.name}: {len(c.runs)} runs, {len(c.topics)} topics, {len(c.llm)} LLM qrels files",
            file=sys.stderr,
        )
    print(
        f"per-topic values in {loaded - start:.1f} s; {args.draws} draws ({args.pair_draws} for pairs) x "
        f"seeds {args.seeds} x every setting in {done - loaded:.1f} s",
        file=sys.stderr,
    )
    print(full(lines) if args.full else markdown(lines), end="")


if __name__ == "__main__":
    main()
