"""Streaming readers change no output: every command that reads a graded passages file, on a graded
file made from examples/tiny, gives byte for byte what the baseline CLI (before streaming) gave.

The graded file is the tiny example's pool (`rubric convert runs`) with grades written here,
deterministic (md5 of passage and item): a self-rating and an answer-extraction prompt on the
questions, a nugget rating, a direct grade and the HumanReview grades of one reviewer. The same
file is also written one line per passage (the original workbench's layout: lines of a query
merged as they stream) and with the lines of one query apart (gathered in a second pass).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from rubric.data.jsonl import read_bank, read_passages, write_passages
from rubric.data.models import ExamGrades, Grades, PromptInfo, SelfRating

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "examples" / "tiny"
RATE_Q = "QuestionSelfRatedUnanswerablePromptWithChoices"
ANSWER_Q = "QuestionCompleteConciseUnanswerablePromptWithChoices"
RATE_N = "NuggetSelfRatedPrompt"
LLM = "google/flan-t5-large"


def _baseline_module():
    from helpers import baseline_cli

    return baseline_cli


def grade(pid: str, item: str) -> int:
    return int(hashlib.md5(f"{pid} {item}".encode()).hexdigest(), 16) % 6


def rating(ids: list[str], pid: str, prompt: str, kind: str, llm: str = LLM) -> ExamGrades:
    grades = {i: grade(pid + llm, i) for i in ids}
    key = "nugget_id" if kind == "nugget" else "question_id"
    return ExamGrades(
        correctAnswered=[i for i, g in grades.items() if g >= 4],
        wrongAnswered=[i for i, g in grades.items() if g < 4],
        answers=[(i, str(g)) for i, g in grades.items()],
        llm=llm,
        prompt_info=PromptInfo(prompt_class=prompt, is_self_rated=True),
        self_ratings=[SelfRating(**{key: i}, self_rating=g) for i, g in grades.items()],
        prompt_type=kind,
    )


def grade_passages(pool: Path, graded: Path) -> None:
    """The pool with every kind of grade, deterministic."""
    questions = {b.query_id: [i.item_id for i in b.items] for b in read_bank(TINY / "questions.jsonl")}
    nuggets = {b.query_id: [i.item_id for i in b.items] for b in read_bank(TINY / "nuggets.jsonl")}
    queries = []
    for q in read_passages(pool):
        for n, p in enumerate(q.paragraphs):
            pid, qs = p.paragraph_id, questions[q.queryId]
            answers = ExamGrades(
                correctAnswered=[i for i in qs if grade(pid, i) > 1],
                wrongAnswered=[i for i in qs if grade(pid, i) <= 1],
                answers=[(i, f"answer {grade(pid, i)} of {pid}") for i in qs],
                llm=LLM,
                prompt_info=PromptInfo(prompt_class=ANSWER_Q, is_self_rated=False),
                prompt_type="question",
            )
            p.exam_grades = [
                rating(qs, pid, RATE_Q, "question"),
                answers,
                rating(nuggets[q.queryId], pid, RATE_N, "nugget"),
            ]
            if n % 3 == 0:  # a reviewer's grades of some passages
                p.exam_grades.append(rating(qs[:2], pid + "alice", "HumanReview", "question", "human:alice"))
            g = grade(pid, "direct")
            p.grades = [
                Grades(correctAnswered=g >= 3, answer="yes" if g >= 3 else "no", llm=LLM,
                       prompt_info=PromptInfo(prompt_class="Sun", is_self_rated=True), self_ratings=g,
                       prompt_type="direct")
            ]  # fmt: skip
        queries.append(q)
    write_passages(graded, queries)


def relayout(graded: Path, per_passage: Path, scattered: Path) -> None:
    """One line per passage; and the same with the lines of the first query split apart."""
    lines = []
    for line in gzip.open(graded, "rt", encoding="utf-8"):
        qid, passages = json.loads(line)
        lines.extend(json.dumps([qid, [p]], ensure_ascii=False) for p in passages)
    per_passage.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    first = json.loads(lines[0])[0]
    mine = [line for line in lines if json.loads(line)[0] == first]
    others = [line for line in lines if json.loads(line)[0] != first]
    half = len(mine) // 2
    mixed = mine[:half] + others[:5] + mine[half:] + others[5:]
    scattered.write_text("".join(line + "\n" for line in mixed), encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_graded(tmp_path_factory) -> dict[str, Path]:
    """The graded tiny example in three layouts, its banks and a review file; the baseline's src."""
    helper = _baseline_module()
    d = tmp_path_factory.mktemp("tiny-graded")
    baseline = helper.baseline_src(d / "baseline")
    pool = d / "pool.jsonl.gz"
    made = helper.run(
        ROOT / "src",
        ["convert", "runs", "--topics", str(TINY / "queries.json"), "--top-k", "10",
         "--collection", str(TINY / "collection.tsv"), "--qrels", str(TINY / "qrels.txt"), str(TINY / "runs"),
         "-o", str(pool)],
        d,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    graded = d / "graded.jsonl.gz"
    grade_passages(pool, graded)
    relayout(graded, d / "per-passage.jsonl", d / "scattered.jsonl")
    first = next(read_passages(graded))
    review = {
        "version": 1,
        "reviewer": "bob",
        "source": {"file": "graded.jsonl.gz", "sha256": hashlib.sha256(graded.read_bytes()).hexdigest()},
        "actions": [
            {"type": "grade", "query_id": first.queryId, "paragraph_id": p.paragraph_id, "grade": 5,
             "item_id": p.exam_grades[0].self_ratings[0].question_id, "prompt_class": RATE_Q, "llm": LLM}
            for p in first.paragraphs[:3]
        ] + [{"type": "note", "query_id": first.queryId, "text": "fine"}],
    }  # fmt: skip
    (d / "review.json").write_text(json.dumps(review), encoding="utf-8")
    return {"baseline": baseline, "dir": d, "graded": graded, "review": d / "review.json"}


def commands(g: Path) -> list[list[str]]:
    """Every command that reads a graded passages file, with the options that change its reading."""
    questions, nuggets = str(TINY / "questions.jsonl"), str(TINY / "nuggets.jsonl")
    PC, QRELS = "--prompt-class", "q.qrels"  # noqa: N806
    f = str(g)
    return [
        ["convert", "check", f],
        ["evaluate", "qrels", f, PC, RATE_Q, "-o", QRELS],
        ["evaluate", "qrels", f, PC, RATE_Q, "--per-item", "-o", QRELS],
        ["evaluate", "qrels", f, PC, RATE_N, "--label", "count", "--min-grade", "3", "-o", QRELS],
        ["evaluate", "qrels", f, PC, "Sun", "--label", "count", "--min-grade", "2", "-o", QRELS],
        ["evaluate", "qrels", f, PC, RATE_Q, "--prefer", "HumanReview", "--query", "q2",
         "--query", "q1", "-o", QRELS],
        ["evaluate", "qrels", f, "-o", QRELS],  # ambiguous: the same error
        ["evaluate", "qrels", f, PC, "NoSuchPrompt", "-o", QRELS],
        ["evaluate", "cover", f, PC, RATE_Q, "-k", "5", "-q", "--overall"],
        ["evaluate", "cover", f, PC, RATE_Q, "--bank", questions, "--normalized", "-c", "-f", "json"],
        ["evaluate", "cover", f, PC, ANSWER_Q, "--correct-answered", "--query", "q3", "-o", "c.tsv"],
        ["verify", "grading", f, "--rating-prompt", RATE_Q, "--bank", questions, "-o", "g.tsv"],
        ["verify", "grading", f, "-p", RATE_N, "--answer-prompt", "rating", "-f", "md"],
        ["verify", "grid", f, "-p", RATE_Q, "--bank", questions, "-f", "csv", "-o", "grid.csv"],
        ["verify", "grid", f, "-p", "Sun", "--grades-only"],
        ["verify", "uncovered", f, "-p", RATE_Q, "-j", "2", "-t", "4", "-f", "md"],
        ["verify", "spurious", f, "-p", RATE_N, "--bank", nuggets, "--top", "5"],
        ["verify", "agreement", f, "-p", RATE_Q, "-p", "Sun", "-j", "2", "--one-vs-rest", "-f", "latex"],
        ["verify", "agreement", f, "-p", RATE_N, "--label", "count", "--min-grade", "3", "--map", "5=3,3=1"],
        ["verify", "agreement", f, PC, RATE_Q, "--reviews", "-o", "r.tsv"],
        ["verify", "impact", f, "-p", RATE_Q, "--bank-before", questions, "--bank-after", nuggets,
         "--needs-grading", "todo"],
        ["verify", "html", f, "-p", RATE_Q, "--bank", questions, "-o", "review.html"],
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["graded.jsonl.gz", "per-passage.jsonl", "scattered.jsonl"])
def test_every_command_gives_the_baseline_output(tiny_graded, layout, tmp_path):
    helper = _baseline_module()
    graded = tiny_graded["dir"] / layout
    for args in commands(graded):
        helper.same_outputs(tiny_graded["baseline"], tmp_path, args)


def test_standard_input_and_apply_give_the_baseline_output(tiny_graded, tmp_path):
    helper = _baseline_module()
    graded = tiny_graded["graded"]
    data, base = graded.read_bytes(), tiny_graded["baseline"]
    helper.same_outputs(
        base, tmp_path, ["evaluate", "qrels", "-", "--prompt-class", RATE_Q, "-o", "q"], stdin=data
    )
    helper.same_outputs(tiny_graded["baseline"], tmp_path, ["convert", "check", "-"], stdin=data)
    out = helper.same_outputs(
        tiny_graded["baseline"],
        tmp_path,
        ["verify", "apply", str(tiny_graded["review"]), str(graded), "-o", "reviewed.jsonl.gz"],
    )
    assert b"human:bob" in gzip.decompress(out["reviewed.jsonl.gz"])


def test_merge_gives_the_baseline_output(tiny_graded, tmp_path):
    """`rubric grade merge`: parts in the file's order (read side by side), a part in another
    order (gathered on disk), no --order, and the errors: overlapping parts, a missing shard."""
    helper = _baseline_module()
    lines = gzip.decompress(tiny_graded["graded"].read_bytes()).decode().splitlines(keepends=True)
    assert len(lines) >= 3
    d = tiny_graded["dir"]
    parts = {
        "even.jsonl.gz": lines[::2],
        "odd.jsonl": lines[1::2],
        "odd-reversed.jsonl": lines[1::2][::-1],
        "first.jsonl": lines[:1],
    }
    for name, part in parts.items():
        data = "".join(part).replace('", [', '",  [').encode()  # not as json.dumps writes them
        (d / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    even, odd, reversed_odd, first = (str(d / name) for name in parts)
    order = ["--order", str(tiny_graded["graded"])]
    for args in (
        [even, odd, *order],
        [odd, even, *order],
        [reversed_odd, even, *order],
        [odd, even],
        [even, first, *order],  # overlapping
        [even, *order],  # a shard missing
    ):
        helper.same_outputs(tiny_graded["baseline"], tmp_path, ["grade", "merge", *args, "-o", "m.jsonl.gz"])
