"""How fast is every `rubric verify` report on a DL19-size graded file (9,260 passages x 10 items)?

Synthesises a graded passages file the size of the TREC DL 2019 pool (43 queries, 9,260 judged
passages, 10 questions per query, a self-rating prompt and an answer-extraction prompt, random
grades and judgments) and runs every report through the real CLI, as a user would. The baseline
is the same process reading the file with ``read_passages`` (the floor every report pays);
ratios say what each report adds on top. Target: every report under 10 s.

Usage: OMP_NUM_THREADS=1 python benchmarks/verify_speed.py [--passages 9260] [--items 10]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rubric.data.jsonl import read_passages, write_bank, write_passages  # noqa: E402
from rubric.data.models import (  # noqa: E402
    ExamGrades,
    FullParagraphData,
    Judgment,
    ParagraphData,
    PromptInfo,
    QueryWithFullParagraphList,
    QuestionItem,
    SelfRating,
    TestBank,
)

RATING = "QuestionSelfRatedUnanswerablePromptWithChoices"
ANSWER = "QuestionCompleteConciseUnanswerablePromptWithChoices"
WORDS = "the a cat dog river bank money loan interest rate water flow music jazz history war".split()


def synthesise(path: Path, bank_path: Path, n_passages: int, n_items: int, n_queries: int = 43) -> None:
    rng = random.Random(13)
    queries, banks = [], []
    per_query = [n_passages // n_queries + (1 if i < n_passages % n_queries else 0) for i in range(n_queries)]
    for qi, n in enumerate(per_query):
        qid = str(1000 + qi)
        texts = [f"question {k} of query {qid}?" for k in range(n_items)]
        ids = [f"{qid}/{hashlib.md5(t.encode()).hexdigest()}" for t in texts]
        banks.append(
            TestBank(
                query_id=qid,
                items=[
                    QuestionItem(query_id=qid, question_id=i, question_text=t)
                    for i, t in zip(ids, texts, strict=True)
                ],
            )
        )
        paragraphs = []
        for pi in range(n):
            pid = f"{qid}-{pi}"
            grades = [rng.choice([0, 0, 0, 1, 2, 3, 4, 4, 5]) for _ in ids]
            text = " ".join(rng.choice(WORDS) for _ in range(60))
            paragraphs.append(
                FullParagraphData(
                    paragraph_id=pid,
                    text=text,
                    paragraph_data=ParagraphData(
                        judgments=[
                            Judgment(paragraphId=pid, query=qid, relevance=rng.choice([0, 0, 1, 2, 3]))
                        ]
                    ),
                    exam_grades=[
                        ExamGrades(
                            correctAnswered=[i for i, g in zip(ids, grades, strict=True) if g >= 4],
                            wrongAnswered=[i for i, g in zip(ids, grades, strict=True) if g < 4],
                            answers=[(i, str(g)) for i, g in zip(ids, grades, strict=True)],
                            llm="google/flan-t5-large",
                            prompt_info=PromptInfo(prompt_class=RATING, is_self_rated=True),
                            self_ratings=[
                                SelfRating(question_id=i, self_rating=g)
                                for i, g in zip(ids, grades, strict=True)
                            ],
                            prompt_type="question",
                        ),
                        ExamGrades(
                            correctAnswered=[i for i, g in zip(ids, grades, strict=True) if g],
                            wrongAnswered=[i for i, g in zip(ids, grades, strict=True) if not g],
                            answers=[(i, " ".join(rng.choice(WORDS) for _ in range(4))) for i in ids],
                            llm="google/flan-t5-large",
                            prompt_info=PromptInfo(prompt_class=ANSWER, is_self_rated=False),
                            prompt_type="question",
                        ),
                    ],
                )
            )
        queries.append(QueryWithFullParagraphList(queryId=qid, paragraphs=paragraphs))
    write_passages(path, queries)
    write_bank(bank_path, banks)
    # the edited bank for `impact`: first item of every query dropped, one rewritten
    edited = []
    for b in banks:
        items = list(b.items[1:])
        new_text = items[0].question_text + " (rewritten)"
        items[0] = QuestionItem(
            query_id=b.query_id,
            question_id=f"{b.query_id}/{hashlib.md5(new_text.encode()).hexdigest()}",
            question_text=new_text,
        )
        edited.append(b.model_copy(update={"items": items}))
    write_bank(bank_path.with_name("bank-edited.jsonl.gz"), edited)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passages", type=int, default=9260)
    ap.add_argument("--items", type=int, default=10)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        graded, bank = d / "graded.jsonl.gz", d / "bank.jsonl.gz"
        t0 = time.perf_counter()
        synthesise(graded, bank, args.passages, args.items)
        print(
            f"synthesised {args.passages} passages x {args.items} items in {time.perf_counter() - t0:.1f} s"
        )

        t0 = time.perf_counter()
        n = sum(len(q.paragraphs) for q in read_passages(graded))
        base = time.perf_counter() - t0
        print(f"baseline: read_passages of {n} passages in-process: {base:.2f} s")

        p = ["-p", RATING]
        reports = {
            "grading": [
                "grading",
                graded,
                "--rating-prompt",
                RATING,
                "--answer-prompt",
                ANSWER,
                "-o",
                d / "g.tsv",
            ],
            "grid": ["grid", graded, *p, "--bank", bank, "-o", d / "grid.tsv"],
            "uncovered": ["uncovered", graded, *p, "-j", "2", "-t", "4", "-o", d / "u.tsv"],
            "spurious": ["spurious", graded, *p, "-j", "0", "-t", "4", "-o", d / "s.tsv"],
            "agreement": ["agreement", graded, *p, "-j", "2", "-f", "latex", "-o", d / "a.tex"],
            "impact": ["impact", graded, *p, "-a", bank, "-b", d / "bank-edited.jsonl.gz", "-o", d / "i.tsv"],
            "html": ["html", graded, *p, "--bank", bank, "-o", d / "review.html"],
        }
        print(f"{'report':<10} {'seconds':>8} {'x baseline':>11}  (CLI subprocess, whole command)")
        worst = 0.0
        for name, cmd in reports.items():
            t0 = time.perf_counter()
            r = subprocess.run(
                [sys.executable, "-m", "rubric", "verify", *map(str, cmd)],
                env=env,
                capture_output=True,
                text=True,
            )
            dt = time.perf_counter() - t0
            if r.returncode != 0:
                raise SystemExit(f"{name} failed: {r.stderr}")
            worst = max(worst, dt)
            print(f"{name:<10} {dt:8.2f} {dt / base:11.2f}")
        size = (d / "review.html").stat().st_size / 2**20
        print(f"slowest report {worst:.2f} s (target < 10 s); review.html is {size:.1f} MiB")


if __name__ == "__main__":
    main()
