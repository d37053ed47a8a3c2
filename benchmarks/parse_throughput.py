"""Answers parsed per second: our self-rating parser vs. the original tool's way, same answers.

The original tool stemmed and fuzzy-matched every answer against every unanswerable expression
on every call; we cache the stemmed answer and the unanswerable test, because a grading run sees
the same few answers ("0", "4", "no", ...) millions of times. Both are timed in this process on
the same answer list: by default the 144k real FLAN-T5-large answers of the LLMJudge dev file
(when ../shared/data is present), else a synthetic mix shaped like it.

    OMP_NUM_THREADS=1 python benchmarks/parse_throughput.py [--n 200000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rubric.prompting.parse import get_parser  # noqa: E402
from rubric.prompting.phrases import UNANSWERABLE_EXPRESSIONS  # noqa: E402

REAL = ROOT.parent / "shared" / "data" / "rubric-llm-judge" / "all-ExtraTrees" / "dev.jsonl.gz"


def real_answers(limit: int) -> list[str]:
    answers: list[str] = []
    with gzip.open(REAL, "rt", encoding="utf-8") as f:
        for line in f:
            for p in json.loads(line)[1]:
                for g in p.get("exam_grades") or []:
                    answers.extend(a for _, a in g["answers"])
            if len(answers) >= limit:
                break
    return answers[:limit]


def synthetic_answers(n: int) -> list[str]:
    pool = ["0"] * 16 + ["4"] * 5 + ["3"] * 4 + ["1"] * 3 + ["", "5", "no", "2", "unanswerable", "yes"]
    pool += ["Poultry", "Dogs have 42 teeth", "Soak in cold water.", "Raymond James", "corsets"]
    rng = random.Random(0)
    return [rng.choice(pool) for _ in range(n)]


def original_style():
    """The original rule without answer caches (the inversion fixed, so grades are comparable).

    Like the original's matcher, the stemmer and the stemmed expressions are built once.
    """
    from nltk.stem import PorterStemmer
    from rapidfuzz import fuzz

    stemmer = PorterStemmer()
    expressions = {stemmer.stem(e) for e in UNANSWERABLE_EXPRESSIONS}

    def parse(answer: str) -> int:
        m = re.fullmatch(r"[^\w]*([0-9])[^\w]*", answer)
        if m and int(m.group(1)) <= 5:
            return int(m.group(1))
        norm = stemmer.stem(answer.lower())
        unanswerable = answer in UNANSWERABLE_EXPRESSIONS or any(
            fuzz.ratio(norm, e) > 80 for e in expressions
        )
        return 0 if not norm or unanswerable else 1

    return parse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000, help="number of answers (default 200000)")
    args = ap.parse_args()
    answers = real_answers(args.n) if REAL.exists() else synthetic_answers(args.n)
    source = "LLMJudge dev (real)" if REAL.exists() else "synthetic"
    parser = get_parser("self_rating")

    baseline = original_style()
    parser.parse("warm up")  # both sides have imported nltk and rapidfuzz before the clock starts
    t0 = time.perf_counter()
    base = [baseline(a) for a in answers]
    t_base = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = [parser.parse(a) for a in answers]
    t_ours = time.perf_counter() - t0

    same = sum(a == b for a, b in zip(base, ours, strict=True))
    print(f"answers: {len(answers)} ({source}); distinct: {len(set(answers))}")
    print(f"original way: {len(answers) / t_base:12,.0f} answers/s")
    print(f"ours:         {len(answers) / t_ours:12,.0f} answers/s")
    print(f"ratio ours/original: {t_base / t_ours:.1f}x; same grade on {same}/{len(answers)} answers")


if __name__ == "__main__":
    main()
