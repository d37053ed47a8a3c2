"""The recipe of docs/evaluation.md ("Estimates from a few human judgments") on the bundled
example, offline: grade with the packaged embedding model, draw topics with `verify sample`
(and their review page), a reviewer's export (written here from examples/tiny/qrels.txt, as a
reviewer who agrees with the NIST-style judgments would grade), `verify apply`, `evaluate
estimate` from the reviewed file."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from helpers.cli import run_cli

TINY = Path(__file__).resolve().parents[2] / "examples" / "tiny"
RATE = "QuestionSelfRatedUnanswerablePromptWithChoices"
# a reviewer's item grade for a passage judged 0-3: off-topic items 0, the passage's level otherwise
GRADE_OF_JUDGMENT = {0: 0, 1: 3, 2: 4, 3: 5}


def review_file(graded: Path, topics: list[str], path: Path) -> Path:
    qrels = {}
    for line in (TINY / "qrels.txt").read_text().splitlines():
        q, _, d, g = line.split()
        qrels[(q, d)] = int(g)
    actions = []
    with gzip.open(graded, "rt") as f:
        for line in f:
            qid, passages = json.loads(line)
            if qid not in topics:
                continue
            for p in passages:
                grade = GRADE_OF_JUDGMENT[qrels[(qid, p["paragraph_id"])]]
                for g in p["exam_grades"]:
                    for r in g["self_ratings"]:
                        actions.append(
                            {"type": "grade", "query_id": qid, "paragraph_id": p["paragraph_id"],
                             "item_id": r["nugget_id"] if r.get("nugget_id") else r["question_id"],
                             "prompt_class": RATE, "grade": grade}
                        )  # fmt: skip
    sha = hashlib.sha256(graded.read_bytes()).hexdigest()
    source = {"file": graded.name, "sha256": sha}
    review = {"version": 1, "reviewer": "alice", "source": source, "actions": actions}
    path.write_text(json.dumps(review))
    return path


@pytest.mark.slow
def test_sample_review_apply_estimate(tmp_path):
    def rubric(*args):
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return r

    rubric(
        "convert", "runs", "--topics", TINY / "queries.json", "--collection", TINY / "collection.tsv",
        "--qrels", TINY / "qrels.txt", "--top-k", "10", TINY / "runs", "-o", "passages.jsonl.gz",
    )  # fmt: skip
    rubric(
        "grade", "passages.jsonl.gz", "--bank", TINY / "questions.jsonl", "--prompt", RATE,
        "--backend", "embedding", "--model", "minilm-l6", "-o", "graded.jsonl.gz",
    )  # fmt: skip
    r = rubric(
        "verify", "sample", "graded.jsonl.gz", "--prompt-class", RATE, "--size", "3", "--seed", "7",
        "-o", "judge.txt", "--html", "review.html",
    )  # fmt: skip
    listed = (tmp_path / "judge.txt").read_text().splitlines()
    topics = [line for line in listed if not line.startswith("#")]
    assert len(topics) == 3 and "3 of 5 topics" in r.stderr
    page = (tmp_path / "review.html").read_text()
    assert all(t in page for t in topics)
    review_file(tmp_path / "graded.jsonl.gz", topics, tmp_path / "review-alice.json")
    rubric("verify", "apply", "review-alice.json", "graded.jsonl.gz", "-o", "reviewed.jsonl.gz")
    r = rubric(
        "evaluate", "estimate", "--run", TINY / "runs", "--graded", "reviewed.jsonl.gz",
        "--prompt-class", RATE, "-m", "nDCG@10", "-l", "4", "--pairs", "-f", "json", "-o", "estimate.json",
    )  # fmt: skip
    data = json.loads((tmp_path / "estimate.json").read_text())
    assert data["n_judged"] == 3 and data["n_topics"] == 5 and data["judged_topics"] == topics
    assert "uniform random sample" in r.stderr
    # the human-only estimate is the reviewed topics' mean on the reviewer's labels
    import rubric as api

    mapped = tmp_path / "reviewer.qrels"
    lines = [line.split() for line in (TINY / "qrels.txt").read_text().splitlines()]
    rows = [f"{q} 0 {d} {GRADE_OF_JUDGMENT[int(g)]}\n" for q, _, d, g in lines if q in topics]
    mapped.write_text("".join(rows))
    expected = api.leaderboard(mapped, [TINY / "runs"], ["nDCG@10"], level=4, complete=True)
    for e in data["estimates"]:
        assert e["human"]["value"] == pytest.approx(expected.get(e["run"], "nDCG@10").value, abs=1e-12)
        assert e["human"]["low"] <= e["human"]["value"] <= e["human"]["high"]
    # --queries reads the sample file
    rubric(
        "evaluate", "leaderboard", "--run", TINY / "runs", "--qrels", TINY / "qrels.txt", "-m", "nDCG@10",
        "--queries", "judge.txt", "-o", "judged.tsv",
    )  # fmt: skip
