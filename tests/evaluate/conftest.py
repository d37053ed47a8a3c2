"""A small graded passages file written as the original tool's JSON (two queries, two runs)."""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

import pytest

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def exam(prompt_class: str, ratings: dict[str, int], prompt_type: str = "question", llm: str = "t5") -> dict:
    key = "question_id" if prompt_type == "question" else "nugget_id"
    return {
        "correctAnswered": [i for i, r in ratings.items() if r >= 4],
        "wrongAnswered": [i for i, r in ratings.items() if r < 4],
        "answers": [[i, "x"] for i in ratings],
        "llm": llm,
        "llm_options": {},
        "prompt_info": {"prompt_class": prompt_class, "is_self_rated": True},
        "self_ratings": [{key: i, "self_rating": r} for i, r in ratings.items()],
        "prompt_type": prompt_type,
    }


def passage(pid: str, qid: str, ranks: dict[str, int], exam_grades=(), grades=()) -> dict:
    rankings = [
        {"method": m, "paragraphId": pid, "queryId": qid, "rank": r, "score": 10.0 - r}
        for m, r in ranks.items()
    ]
    return {
        "paragraph_id": pid,
        "text": f"text of {pid}",
        "paragraph_data": {"judgments": [], "rankings": rankings},
        "exam_grades": list(exam_grades),
        "grades": list(grades),
    }


def graded_lines() -> list:
    """q1: items a, b, c graded on p1..p3; q2: item a on p4, p5 ungraded; run beta has no q2 passage."""
    sun = {"correctAnswered": True, "answer": "2", "llm": "t5", "prompt_info": {"prompt_class": "Sun"},
           "self_ratings": 2, "prompt_type": "direct"}  # fmt: skip
    return [
        [
            "q1",
            [
                passage(
                    "p1",
                    "q1",
                    {"alpha": 1, "beta": 2},
                    [
                        exam(QSR, {"q1/a": 5, "q1/b": 0, "q1/c": 2}),
                        exam("NuggetSelfRatedPrompt", {"q1/n": 3}, "nugget"),
                    ],
                    [sun],
                ),  # fmt: skip
                passage("p2", "q1", {"alpha": 2}, [exam(QSR, {"q1/a": 1, "q1/b": 4, "q1/c": 0})]),
                passage("p3", "q1", {"beta": 1}, [exam(QSR, {"q1/a": 0, "q1/b": 0, "q1/c": 0})]),
            ],
        ],
        ["q2", [passage("p4", "q2", {"alpha": 1}, [exam(QSR, {"q2/a": 3})]), passage("p5", "q2", {})]],
    ]


@pytest.fixture
def graded(tmp_path):
    path = tmp_path / "graded.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for line in graded_lines():
            f.write(json.dumps(line) + "\n")
    return path


@pytest.fixture
def builders():
    """The helpers that write graded files, for tests that build their own: ``exam``,
    ``passage``, ``graded_lines``."""
    return SimpleNamespace(exam=exam, passage=passage, graded_lines=graded_lines)
