"""Campaign scale on one machine: every command that reads a graded passages file, on 20k and 200k
passages, seconds and peak memory, against today's reader path (a copy of the baseline commit).

Synthesises seeded graded files the shape of a TREC RAG campaign: queries of ``--per-query``
passages (RAG 2024: 301 topics x 50 runs x 20 answer sentences is about 1,000 passages a topic),
each passage judged, ranked by two of ``--runs`` runs, and graded on ``--items`` questions by a
self-rating prompt and an answer-extraction prompt, as ``rubric grade`` writes them. The two
sizes differ in the number of queries only (the largest query is the same), so a reader whose
memory is bounded by one query has the same peak on both: the 200k/20k ratio of peak RSS is the
test of "flat in the file size".

Every command runs as a child process (``python -m rubric ...``); its peak RSS is the child's
``ru_maxrss`` (``os.wait4``). The baseline is the CLI of ``--baseline`` (default: the commit
before streaming, 0a3c0e0) extracted with ``git archive`` into a temporary folder and run with
PYTHONPATH pointing there, on the same files in the same run; outputs of both must be equal
byte for byte. Note the machine's load (``uptime``): the machine may be shared.

    OMP_NUM_THREADS=1 nice python benchmarks/scale.py                  # 20k and 200k, both CLIs
    python benchmarks/scale.py --sizes 20000 --no-baseline             # quick look
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
BASELINE = "0a3c0e0"

RATING = "QuestionSelfRatedUnanswerablePromptWithChoices"
ANSWER = "QuestionCompleteConciseUnanswerablePromptWithChoices"
LLM = "google/flan-t5-large"
WORDS = (
    "the a of cat dog river bank money loan interest rate water flow music jazz history war "
    "protein diet sleep heart study patients results trial effect measured higher lower"
).split()


def item_id(qid: str, text: str) -> str:
    return f"{qid}/{hashlib.md5(text.strip().encode()).hexdigest()}"


def synthesise(
    folder: Path, n_passages: int, n_items: int = 10, per_query: int = 1000, n_runs: int = 50, seed: int = 13
) -> dict[str, Path]:
    """Write ``graded.jsonl.gz``, ``bank.jsonl.gz``, ``bank-edited.jsonl.gz`` and ``review.json``
    into ``folder``; returns their paths by name."""
    rng = random.Random(seed)
    n_queries = max(1, -(-n_passages // per_query))
    runs = [f"run{r:02d}" for r in range(n_runs)]
    files = {
        "graded": folder / "graded.jsonl.gz",
        "bank": folder / "bank.jsonl.gz",
        "edited": folder / "bank-edited.jsonl.gz",
        "review": folder / "review.json",
    }
    actions = []
    with (
        gzip.open(files["graded"], "wt", encoding="utf-8", compresslevel=6) as out,
        gzip.open(files["bank"], "wt", encoding="utf-8") as bank,
        gzip.open(files["edited"], "wt", encoding="utf-8") as edited,
    ):
        left = n_passages
        for qi in range(n_queries):
            qid = str(1000 + qi)
            query_text = " ".join(rng.choice(WORDS) for _ in range(5))
            texts = [
                f"question {k} of query {qid}: " + " ".join(rng.choice(WORDS) for _ in range(6)) + "?"
                for k in range(n_items)
            ]
            ids = [item_id(qid, t) for t in texts]
            items = [{"query_id": qid, "question_id": i, "question_text": t} for i, t in zip(ids, texts)]
            bank.write(json.dumps({"query_id": qid, "query_text": query_text, "items": items}) + "\n")
            new_text = texts[1] + " (rewritten)"
            moved = [*items[2:], {"query_id": qid, "question_id": item_id(qid, new_text), "question_text": new_text}]
            edited.write(json.dumps({"query_id": qid, "query_text": query_text, "items": moved}) + "\n")
            n = min(per_query, left)
            left -= n
            paragraphs = []
            for pi in range(n):
                pid = f"{qid}-{pi}"
                grades = [rng.choice([0, 0, 0, 1, 2, 3, 4, 4, 5]) for _ in ids]
                rankings = [
                    {"method": runs[(pi + k * 7) % n_runs], "paragraphId": pid, "queryId": qid,
                     "rank": pi // n_runs + 1 + k, "score": round(100.0 - pi / 10 - k, 3)}
                    for k in range(2)
                ]  # fmt: skip
                paragraphs.append(
                    {
                        "paragraph_id": pid,
                        "text": " ".join(rng.choice(WORDS) for _ in range(40)),
                        "paragraph": "",
                        "paragraph_data": {
                            "judgments": [
                                {"paragraphId": pid, "query": qid, "relevance": rng.choice([0, 0, 1, 2, 3]),
                                 "titleQuery": query_text}
                            ],
                            "rankings": rankings,
                        },
                        "exam_grades": [
                            {
                                "correctAnswered": [i for i, g in zip(ids, grades) if g >= 4],
                                "wrongAnswered": [i for i, g in zip(ids, grades) if g < 4],
                                "answers": [[i, str(g)] for i, g in zip(ids, grades)],
                                "llm": LLM,
                                "llm_options": {},
                                "exam_ratio": sum(g >= 4 for g in grades) / len(grades),
                                "prompt_info": {"prompt_class": RATING, "is_self_rated": True},
                                "self_ratings": [{"question_id": i, "self_rating": g} for i, g in zip(ids, grades)],
                                "prompt_type": "question",
                            },
                            {
                                "correctAnswered": [i for i, g in zip(ids, grades) if g],
                                "wrongAnswered": [i for i, g in zip(ids, grades) if not g],
                                "answers": [[i, " ".join(rng.choice(WORDS) for _ in range(4))] for i in ids],
                                "llm": LLM,
                                "llm_options": {},
                                "prompt_info": {"prompt_class": ANSWER, "is_self_rated": False},
                                "prompt_type": "question",
                            },
                        ],
                    }
                )  # fmt: skip
                if pi < 3:
                    actions.append(
                        {"type": "grade", "query_id": qid, "paragraph_id": pid, "item_id": ids[pi],
                         "prompt_class": RATING, "llm": LLM, "grade": (grades[pi] + 1) % 6}
                    )  # fmt: skip
            out.write(json.dumps([qid, paragraphs], ensure_ascii=False) + "\n")
    sha = hashlib.sha256(files["graded"].read_bytes()).hexdigest()
    review = {"version": 1, "reviewer": "alice", "source": {"file": "graded.jsonl.gz", "sha256": sha},
              "actions": actions}  # fmt: skip
    files["review"].write_text(json.dumps(review))
    return files
