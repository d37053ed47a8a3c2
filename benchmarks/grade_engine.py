"""The whole `rubric grade` on CPU, this tree against a baseline git revision: not slower, same file.

Both trees grade the same pool (``--queries`` x ``--passages`` passages of ~250 words, 3 questions
per query, the self-rating prompt) with the same random FLAN-T5-small-shaped model (it answers like
a grader: "4", then end-of-sequence), ``--no-cache``, on one device. Each run is the real command in
a subprocess (start-up and model loading included, the same for both); the trees alternate
``--repeats`` times and the best time of each is compared. The graded files must be byte for byte
equal: the engine may change, the grades may not.

    OMP_NUM_THREADS=1 python benchmarks/grade_engine.py                  # against `main`
    OMP_NUM_THREADS=1 python benchmarks/grade_engine.py --baseline HEAD~3 --repeats 3
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(d_model=512, layers=8, heads=6, d_kv=64, d_ff=1024, vocab_size=32128)
PROMPT = "QuestionSelfRatedUnanswerablePromptWithChoices"


def tiny_models():
    import importlib.util

    spec = importlib.util.spec_from_file_location("tiny_models", ROOT / "tests" / "llm" / "tiny_models.py")
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


def run(src: Path, args: list, out: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "rubric", *map(str, args), "-o", out], env=env,
                       capture_output=True, text=True)  # fmt: skip
    seconds = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"FAIL: {src}: {r.stderr[-2000:]}")
    return seconds


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
        grade = ["grade", pool, "--bank", bank, "-p", PROMPT, "-m", model, "--no-cache", "--device", "cpu"]
        trees = {"baseline": base / "src", "this tree": ROOT / "src"}
        best = dict.fromkeys(trees, float("inf"))
        for _ in range(args.repeats):
            for name, src in trees.items():
                best[name] = min(best[name], run(src, grade, tmp / f"{name}.jsonl.gz"))
        same = gzip.decompress((tmp / "baseline.jsonl.gz").read_bytes()) == gzip.decompress(
            (tmp / "this tree.jsonl.gz").read_bytes()
        )
    print(
        f"{n} pairs, random FLAN-T5-small shape, CPU, best of {args.repeats} "
        "(start-up and model load included)"
    )
    for name, seconds in best.items():
        print(f"{name:>10}: {n / seconds:6.2f} pairs/s  ({seconds:.1f} s)")
    print(f"ratio this tree / baseline ({args.baseline}) = {best['baseline'] / best['this tree']:.3f}x")
    print(f"graded files identical: {'yes' if same else 'NO'}")
    if not same:
        sys.exit("FAIL: the graded files differ")


if __name__ == "__main__":
    main()
