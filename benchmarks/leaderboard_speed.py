"""Leaderboard speed: 37 TREC DL 2019 runs x 4 measures, ours against the naive pytrec_eval way.

The naive way is what a script around pytrec_eval does: read every run completely, build a
RelevanceEvaluator per run (trec_eval parses the qrels again each time) and evaluate. Ours is
``rubric.evaluate.leaderboard``: runs read in parallel keeping only the judged queries, one
evaluator per relevance level for all runs. Both run in this process; the ratio is what counts
(the machine may be shared). Also times ``rubric evaluate --help`` in a fresh interpreter.

    OMP_NUM_THREADS=1 python benchmarks/leaderboard_speed.py [RUNS_DIR QRELS]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rubric.data.trec import expand_paths, read_qrels, read_run  # noqa: E402
from rubric.evaluate import leaderboard  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
MEASURES = ["ndcg_cut.10", "map", "recip_rank", "P.10"]
IR_MEASURES_NAMES = ["nDCG@10", "AP", "RR", "P@10"]  # the same four, spelled as ir_measures does


def naive(runs_dir: Path, qrels_path: Path) -> dict[str, float]:
    import pytrec_eval

    qrels = read_qrels(qrels_path)
    out = {}
    for path in expand_paths([runs_dir]):
        run = read_run(path)
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
        per_query = evaluator.evaluate(run.scores)
        out[run.name] = sum(v["ndcg_cut_10"] for v in per_query.values()) / len(per_query)
    return out


def ours(runs_dir: Path, qrels_path: Path, measures: list[str] = MEASURES) -> dict[str, float]:
    return leaderboard(qrels_path, [runs_dir], measures).values(measures[0])


def timed(fn, *args) -> tuple[float, dict[str, float]]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def main() -> None:
    runs_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else DATA / "naghmefarzi-llmjudge" / "dl19-runs"
    qrels = Path(sys.argv[2]) if len(sys.argv) > 2 else DATA / "anserini-tools" / "qrels.dl19-passage.txt"
    t_naive, a = timed(naive, runs_dir, qrels)
    t_ours, b = timed(ours, runs_dir, qrels)
    assert a.keys() == b.keys() and all(abs(a[k] - b[k]) < 1e-12 for k in a), "results differ"
    print(
        f"leaderboard {len(b)} runs x {len(MEASURES)} measures: naive {t_naive:.2f} s, ours {t_ours:.2f} s, "
        f"speed-up x{t_naive / t_ours:.2f}"
    )
    t_names, c = timed(ours, runs_dir, qrels, IR_MEASURES_NAMES)
    assert c == b, "ir_measures names give other values"
    print(f"ours with ir_measures names: {t_names:.2f} s, x{t_names / t_ours:.2f} the trec_eval names' time")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rubric", "evaluate", "--help"], check=True, capture_output=True,
                   env={"PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"})  # fmt: skip
    print(f"rubric evaluate --help: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
