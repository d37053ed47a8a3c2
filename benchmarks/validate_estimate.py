"""Validate `rubric evaluate estimate` on real TREC data: do its intervals cover the NIST mean?

For TREC DL 2019 (NIST qrels as the truth, the 37 official runs) and TREC DL 2020 (the 15
rank_llm runs), with each released phase-3 LLM qrels file of the original workbench as the LLM
labels, nDCG@10 and AP with ``-l 2`` (nDCG uses the raw grades): per-topic values are computed
once with trec_eval, then for n = 5, 10, 20 judged topics, ``--draws`` seeded uniform draws of n
topics: the coverage of each run's all-topic NIST mean by the PPI++ and human-only intervals
(95%; minimum and mean over runs) and their mean widths; and the number of judged topics at
which the human-only interval is as narrow as PPI++'s at n = 10. Prints a Markdown table
(docs/validation.md holds its output). Also used by tests/validation/test_estimate_real.py.

Usage (from the repository root):
    OMP_NUM_THREADS=1 python benchmarks/validate_estimate.py [--data ../shared/data] [--draws 1000]
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

from rubric.data.trec import read_qrels, read_run  # noqa: E402
from rubric.evaluate.estimate import topic_values  # noqa: E402
from rubric.evaluate.measures import parse_measures  # noqa: E402
from rubric.evaluate.ppi_study import human_n_for_width, study  # noqa: E402
from rubric.evaluate.treceval import Evaluator  # noqa: E402

MEASURES = ("nDCG@10", "AP(rel=2)")
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
    evaluator = Evaluator(qrels, parse_measures(list(MEASURES)), level=LEVEL, complete=True)
    return topic_values(evaluator, runs, topics).values


def load_collection(name: str, nist: Path, run_paths: dict[str, Path], llm_dir: Path) -> Collection:
    """Topics: those the NIST qrels judge (every LLM file labels them all, checked)."""
    human_qrels = {q: d for q, d in read_qrels(nist).items() if d}
    topics = sorted(human_qrels)
    runs = [read_run(path, name=run, queries=frozenset(topics)) for run, path in run_paths.items()]
    # read_run keeps only the judged topics, so a run of 200 topics costs little memory
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
    collection: str
    qrels: str
    measure: str
    n: int
    cov_ppipp: tuple[float, float]  # min, mean over runs
    cov_human: tuple[float, float]
    width_ppipp: float
    width_human: float
    human_n: int | None  # only for n = 10


def rows(c: Collection, draws: int, seed: int = 0, sizes: tuple[int, ...] = SIZES) -> list[Line]:
    out = []
    for qrels, by_measure in c.llm.items():
        for m in MEASURES:
            for n in sizes:
                s = study(c.human[m], by_measure[m], n, draws=draws, seed=seed)
                human_n = None
                if n == 10:
                    human_n = human_n_for_width(c.human[m], s.width["ppi++"], draws=draws, seed=seed)
                out.append(
                    Line(
                        c.name,
                        qrels,
                        m,
                        n,
                        (s.min_coverage("ppi++"), s.mean_coverage("ppi++")),
                        (s.min_coverage("human"), s.mean_coverage("human")),
                        s.width["ppi++"],
                        s.width["human"],
                        human_n,
                    )
                )
    return out


def markdown(lines: list[Line]) -> str:
    head = (
        "| collection | LLM qrels | measure | n | PPI++ coverage min / mean | human-only coverage min / mean "
        "| PPI++ width | human-only width | ratio | human-only n for PPI++'s width at n=10 |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {x.collection} | {x.qrels} | {x.measure} | {x.n} | {x.cov_ppipp[0]:.3f} / {x.cov_ppipp[1]:.3f} "
        f"| {x.cov_human[0]:.3f} / {x.cov_human[1]:.3f} | {x.width_ppipp:.4f} | {x.width_human:.4f} "
        f"| {x.width_ppipp / x.width_human:.3f} | {'' if x.human_n is None else x.human_n} |\n"
        for x in lines
    )
    return head + body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    collections = [dl19(args.data), dl20(args.data)]
    loaded = time.perf_counter()
    lines = [x for c in collections for x in rows(c, args.draws, args.seed)]
    done = time.perf_counter()
    for c in collections:
        print(
            f"{c.name}: {len(c.runs)} runs, {len(c.topics)} topics, {len(c.llm)} LLM qrels files",
            file=sys.stderr,
        )
    print(
        f"per-topic values in {loaded - start:.1f} s; "
        f"{args.draws} draws x every setting in {done - loaded:.1f} s",
        file=sys.stderr,
    )
    print(markdown(lines), end="")


if __name__ == "__main__":
    main()
