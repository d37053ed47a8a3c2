"""The grading engine on CPU, this tree against a baseline git revision: not slower, same file.

Both trees grade the same pool (``--queries`` x ``--passages`` passages of ~250 words, 3 questions
per query, the self-rating prompt) with the same random FLAN-T5-small-shaped model (it answers like
a grader: "4", then end-of-sequence), without a cache, through the library job that ``rubric
grade`` runs (the baseline's ``grade_shard`` where it predates ``rubric.grading.job``). Each run is
a fresh process per tree; the time is taken inside it, around the job (model loading, reading,
grading, writing -- not interpreter start-up), together with the time spent in the model's
``generate`` calls, so what the engine adds shows as the difference of the two. The trees
alternate ``--repeats`` times (A B, B A, ...) and the best and median times are compared. The
graded files must be byte for byte equal: the engine may change, the grades may not.

    OMP_NUM_THREADS=1 python benchmarks/grade_engine.py                  # against `main`
    OMP_NUM_THREADS=1 python benchmarks/grade_engine.py --baseline HEAD~3 --repeats 6
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(d_model=512, layers=8, heads=6, d_kv=64, d_ff=1024, vocab_size=32128)
PROMPT = "QuestionSelfRatedUnanswerablePromptWithChoices"


def tiny_models():
    import importlib.util

    path = ROOT / "tests" / "helpers" / "tiny_models.py"
    spec = importlib.util.spec_from_file_location("tiny_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_inputs(folder: Path, words: list[str], queries: int, passages: int, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    pool, bank = folder / "passages.jsonl.gz", folder / "bank.jsonl"
    with gzip.open(pool, "wt") as f:
        for q in range(queries):
            ps = [
                {
                    "paragraph_id": f"d{q}-{k}",
                    "text": " ".join(rng.choice(words) for _ in range(rng.randint(200, 300))),
                }
                for k in range(passages)
            ]
            f.write(json.dumps([f"q{q}", ps]) + "\n")
    with open(bank, "w") as f:
        for q in range(queries):
            items = []
            for _ in range(3):
                text = " ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + " ?"
                qid = f"q{q}/{hashlib.md5(text.encode()).hexdigest()}"
                items.append({"query_id": f"q{q}", "question_id": qid, "question_text": text})
            f.write(json.dumps({"query_id": f"q{q}", "query_text": f"query {q}", "items": items}) + "\n")
    return pool, bank


# Runs inside each tree's process: time the job (and the model's generate calls) around it.
JOB = """
import json, sys, time
from pathlib import Path
pool, bank, model, out, prompt = sys.argv[1:6]
import rubric.llm.hf_common as hc
model_seconds = 0.0
run = hc.GenerativeHF._run
def timed(self, *a, **k):
    global model_seconds
    t = time.perf_counter(); r = run(self, *a, **k); model_seconds += time.perf_counter() - t
    return r
hc.GenerativeHF._run = timed
start = time.perf_counter()
try:
    from rubric.grading.job import GradeJob, run_shard
except ImportError:  # before the engine split: the CLI module held the job
    from rubric.cli.grade import grade_shard, _options
    from rubric.data.jsonl import read_bank
    from rubric.grading.grader import items_by_query
    banks = list(read_bank(bank))
    grade_shard(shard=None, device=None, output=Path(out), passages=Path(pool), prompt_names=[prompt],
                prompt_files=None, backend_name="hf-seq2seq", model=model,
                backend_options=_options("cpu", "auto", 0, 0, 512, 32, 1), fast=True, cache_path=None,
                no_cache=True, checkpoint_pairs=4096, inputs=[Path(pool), Path(bank)],
                items=items_by_query(banks), query_texts={b.query_id: b.query_text for b in banks})
else:
    job = GradeJob(passages=Path(pool), prompts=(prompt,), bank=Path(bank), model=model,
                   backend_options={"device": "cpu"}, use_cache=False)
    run_shard(job, output=Path(out))
print(json.dumps([time.perf_counter() - start, model_seconds]))
"""


def run(src: Path, inputs: list, out: Path) -> tuple[float, float]:
    """(seconds of the job, seconds in the model) of one run in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1")
    r = subprocess.run([sys.executable, "-c", JOB, *map(str, inputs), out, PROMPT], env=env,
                       capture_output=True, text=True)  # fmt: skip
    if r.returncode != 0:
        sys.exit(f"FAIL: {src}: {r.stderr[-2000:]}")
    total, model = json.loads(r.stdout.strip().splitlines()[-1])
    return total, model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="main", help="git revision to compare with (default: main)")
    ap.add_argument("--queries", type=int, default=6)
    ap.add_argument("--passages", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="grade-engine-") as tmp:
        tmp = Path(tmp)
        base = tmp / "baseline"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.baseline, "src", "prompts"], capture_output=True
        )
        if archive.returncode != 0:
            sys.exit(f"FAIL: git archive {args.baseline}: {archive.stderr.decode()}")
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        tm = tiny_models()
        model = tm.build_t5(tmp / "model", grader_like=True, seed=args.seed, **SMALL)
        pool, bank = make_inputs(tmp, list(tm.WORDS), args.queries, args.passages, args.seed)
        n = args.queries * args.passages * 3
        trees = {"baseline": base / "src", "this tree": ROOT / "src"}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for r in range(args.repeats):  # A B, B A, A B, ...: no tree always runs first
            for name in list(trees) if r % 2 == 0 else list(trees)[::-1]:
                out = tmp / f"{name}.jsonl.gz"
                for stale in tmp.glob(f"{name}.jsonl.gz*"):
                    stale.unlink()
                times[name].append(run(trees[name], [pool, bank, model], out))
        best = {name: min(t for t, _ in runs) for name, runs in times.items()}
        median = {name: statistics.median(t for t, _ in runs) for name, runs in times.items()}
        engine = {name: statistics.median(t - m for t, m in runs) for name, runs in times.items()}
        same = gzip.decompress((tmp / "baseline.jsonl.gz").read_bytes()) == gzip.decompress(
            (tmp / "this tree.jsonl.gz").read_bytes()
        )
    print(f"{n} pairs, random FLAN-T5-small shape, CPU, {args.repeats} runs per tree")
    for name in best:
        print(
            f"{name:>10}: {n / best[name]:6.2f} pairs/s  (best {best[name]:.1f} s, "
            f"median {median[name]:.1f} s; outside the model's generate calls {engine[name]:.2f} s)"
        )
    print(
        f"ratio this tree / baseline ({args.baseline}) = {best['baseline'] / best['this tree']:.3f}x best, "
        f"{median['baseline'] / median['this tree']:.3f}x median"
    )
    print(f"graded files identical: {'yes' if same else 'NO'}")
    if not same:
        sys.exit("FAIL: the graded files differ")


if __name__ == "__main__":
    main()
