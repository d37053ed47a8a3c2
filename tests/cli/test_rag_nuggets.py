"""AutoNuggetizer end to end: `rubric bank nuggetize` -> `rubric grade assign` -> `rubric evaluate nuggets`
through the real CLI against a real OpenAI-compatible server, with scores computed by hand.

The test server nuggetizes a passage as its first five words, labels a nugget okay when it says
"minor" (else vital), and assigns support when every word of the nugget is in the answer,
partial_support when at least half are, else not_support (see tests/helpers/openai_server.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.openai_server import serve
from rubric.data.jsonl import read_bank, write_passages
from rubric.data.models import FullParagraphData, Judgment, ParagraphData, QueryWithFullParagraphList

PASSAGES = {
    "q1": [
        ("p1", 2, "Bees collect nectar from flowers every day."),
        ("p2", 1, "Minor detail honey is sticky and sweet."),
        ("p3", 0, "Unrelated passage about cars and roads."),
        ("p4", 1, "Honey is stored in wax combs."),
        ("p5", 1, "Minor note bees dance a lot."),
    ],
    "q2": [("p6", 1, "Wax is made by worker bees."), ("p7", 0, "Cars are loud.")],
    "q3": [("p8", 0, "Nothing relevant here.")],
}
QUERIES = {"q1": "how do bees make honey", "q2": "what is wax", "q3": "who keeps bees"}
ANSWERS = [
    ("runA", "q1", ["Bees collect nectar from flowers.", "Honey is stored in wax cells."]),
    ("runA", "q2", ["Wax is made by bees."]),
    ("runB", "q1", ["Nectar comes from flowers.", "Honey is sticky."]),
    ("runB", "q3", ["Beekeepers keep bees."]),
]


def passages_file(path: Path) -> Path:
    queries = []
    for qid, rows in PASSAGES.items():
        paras = [
            FullParagraphData(
                paragraph_id=pid,
                text=text,
                paragraph_data=ParagraphData(judgments=[Judgment(paragraphId=pid, query=qid, relevance=rel)]),
            )
            for pid, rel, text in rows
        ]
        queries.append(QueryWithFullParagraphList(queryId=qid, paragraphs=paras))
    write_passages(path, queries)
    return path


def answers_file(path: Path) -> Path:
    lines = [
        {
            "run_id": run,
            "topic_id": qid,
            "topic": QUERIES[qid],
            "references": [],
            "answer": [{"text": s} for s in sents],
        }
        for run, qid, sents in ANSWERS
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def llm(url, tmp_path, *extra):
    return (
        "-m",
        "gpt-test",
        "--base-url",
        url,
        "--retry-base",
        "0.01",
        "--cache",
        tmp_path / "cache.sqlite",
        *extra,
    )


@pytest.fixture
def fixture_files(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps(QUERIES))
    return (
        passages_file(tmp_path / "passages.jsonl.gz"),
        answers_file(tmp_path / "answers.jsonl"),
        tmp_path / "q.json",
    )


def test_nuggetize_assign_evaluate_match_hand_computed_scores(openai_server, cli, tmp_path, fixture_files):
    passages, answers, queries = fixture_files
    bank, assigned = tmp_path / "nuggets.jsonl.gz", tmp_path / "assigned.jsonl.gz"
    with serve(fail_rate=0.3, seed=3) as srv:
        r = cli(
            "bank", "nuggetize", "--passages", passages, "--topics", queries, "--window", "2", "--keep", "3",
            "-o", bank,
            *llm(srv.url, tmp_path, "--max-retries", "8"),
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert "wrote 4 nuggets (3 vital) for 2 queries" in r.stderr
        assert "1 queries have no passage judged >= 1" in r.stderr
        banks = {b.query_id: b for b in read_bank(bank)}
        assert [(i.nugget_text, i.importance) for i in banks["q1"].items] == [
            ("Bees collect nectar from flowers", "vital"),
            ("Honey is stored in wax", "vital"),
            ("Minor detail honey is sticky", "okay"),  # "Minor note bees dance a" (okay) trimmed by --keep 3
        ]
        assert banks["q1"].info["windows"] == 2 and banks["q1"].info["trimmed"] == 1
        assert banks["q1"].info["failed_windows"] == [] and banks["q1"].info["llm"] == "gpt-test"
        assert [i.nugget_text for i in banks["q2"].items] == ["Wax is made by worker"]
        # the second window saw the first window's nuggets (iterative creation)
        creator = [
            q["body"]["messages"][1]["content"] for q in srv.requests if "Update the list" in str(q["body"])
        ]
        assert any(
            'Initial Nugget List: ["Bees collect nectar from flowers", "Minor detail' in c for c in creator
        )

        r = cli(
            "grade",
            "assign",
            answers,
            "--bank",
            bank,
            "-o",
            assigned,
            *llm(srv.url, tmp_path, "--max-retries", "8"),
        )
        assert r.returncode == 0, r.stderr
        assert "wrote 3 assignments (2 runs, 2 queries)" in r.stderr
        assert "skipped 1 answers" in r.stderr
        assert srv.failures_sent > 0

    records = [json.loads(line) for line in __import__("gzip").open(assigned, "rt")]
    runb = next(r for r in records if r["run_id"] == "runB")
    assert [n["assignment"] for n in runb["nuggets"]] == ["partial_support", "not_support", "partial_support"]
    assert set(runb["nuggets"][0]) == {"nugget_id", "nugget_text", "importance", "assignment"}
    assert runb["llm"] == "gpt-test" and runb["prompt_class"] == "AutoNuggetizerAssign"

    per_query = tmp_path / "per-query.tsv"
    r = cli("evaluate", "nuggets", assigned, "-o", per_query)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert rows[0] == ["run", "measure", "value", "stderr", "n_queries"]
    got = {(run, m): (v, se, n) for run, m, v, se, n in rows[1:]}
    assert got[("runA", "V_strict")] == ("0.5000", "0.5000", "2")  # q1 1.0, q2 0.0
    assert got[("runA", "V_partial")] == ("0.7500", "0.2500", "2")  # q1 1.0, q2 0.5
    assert got[("runA", "A_strict")][0] == "0.3333"  # q1 2/3, q2 0
    assert got[("runA", "A_partial")][0] == "0.5833"  # q1 2/3, q2 0.5
    assert got[("runB", "V_strict")][0] == "0.0000"
    assert got[("runB", "V_partial")][0] == "0.1250"  # q1 (0.5 + 0) / 2, q2 missing = 0
    assert got[("runB", "A_partial")][0] == "0.1667"  # q1 (0.5 + 0 + 0.5) / 3, q2 0
    assert [row[0] for row in rows[1:]][:4] == ["runA"] * 4  # best V_strict first
    assert "run runB: no answer for 1 queries (scored 0)" in r.stderr
    table = [line.split("\t") for line in per_query.read_text().splitlines()]
    assert table[0][:3] == ["run", "query", "V_strict"]
    assert ["runB", "q2", "0.0000", "0.0000", "0.0000", "0.0000", "1", "1", "0"] in table

    # the same answers as a passages file (convert rag) give the same assignments
    rag_passages = tmp_path / "rag.jsonl.gz"
    assert cli("convert", "rag", "-a", answers, "-o", rag_passages).returncode == 0
    assigned2 = tmp_path / "assigned2.jsonl"
    srv = openai_server
    r = cli(
        "grade",
        "assign",
        rag_passages,
        "--bank",
        bank,
        "--topics",
        queries,
        "-o",
        assigned2,
        *llm(srv.url, tmp_path),
    )
    assert r.returncode == 0, r.stderr
    again = cli("evaluate", "nuggets", assigned2)
    assert again.stdout == cli("evaluate", "nuggets", assigned).stdout


def test_failed_assignment_batches_are_reported_and_never_scored(cli, tmp_path, fixture_files, user_error):
    _, answers, _ = fixture_files
    bank = tmp_path / "bank.tsv"
    bank.write_text("q1\tBees collect nectar\tvital\n")
    nuggets = tmp_path / "nuggets.jsonl"
    assert cli("bank", "import", bank, "--kind", "nuggets", "-o", nuggets).returncode == 0
    assigned = tmp_path / "assigned.jsonl"
    with serve(fail_rate=1.0) as srv:
        r = cli(
            "grade",
            "assign",
            answers,
            "--bank",
            nuggets,
            "-o",
            assigned,
            *llm(srv.url, tmp_path, "--max-retries", "1"),
        )
    assert r.returncode == 1
    # one count of failures: the summary line's is the listing's
    assert "2 retries; 2 assignment batches failed (2 unanswered, 0 unreadable" in r.stderr
    assert "rubric: 2 assignment batches failed and are missing" in r.stderr
    user_error(cli("evaluate", "nuggets", assigned), "assigned.jsonl:1: nuggets[0] has no assignment")


def test_nuggetize_and_assign_input_errors(cli, tmp_path, fixture_files, user_error):
    passages, answers, queries = fixture_files
    out = tmp_path / "o.jsonl"
    user_error(
        cli(
            "bank",
            "nuggetize",
            "--passages",
            passages,
            "--topics",
            queries,
            "--min-judgment",
            "3",
            "--model",
            "m",
            "-o",
            out,
        ),
        "--min-judgment 3",
    )
    (tmp_path / "few.json").write_text(json.dumps({"q1": "x"}))
    user_error(
        cli(
            "bank",
            "nuggetize",
            "--passages",
            passages,
            "--topics",
            tmp_path / "few.json",
            "--model",
            "m",
            "-o",
            out,
        ),
        "q2",
    )
    bank = tmp_path / "b.tsv"
    bank.write_text("q9\tSomething\n")
    nuggets = tmp_path / "n.jsonl"
    assert cli("bank", "import", bank, "--kind", "nuggets", "-o", nuggets).returncode == 0
    user_error(
        cli("grade", "assign", answers, "--bank", nuggets, "--model", "m", "-o", out), "none of the answered"
    )
    (tmp_path / "bad.jsonl").write_text('{"run_id": "r", "answer": []}\n')
    user_error(
        cli("grade", "assign", tmp_path / "bad.jsonl", "--bank", nuggets, "--model", "m", "-o", out),
        "bad.jsonl:1",
    )
    assert not out.exists()


def test_assign_reads_answers_from_standard_input(cli, tmp_path, fixture_files):
    """``grade assign -``: the answers' format is detected from the first record and then read in
    full, so standard input is spooled once instead of being read twice ("already read")."""
    import os
    import subprocess
    import sys

    passages, answers, queries = fixture_files
    bank, by_file, by_pipe = tmp_path / "nuggets.jsonl.gz", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    with serve() as srv:
        options = [str(a) for a in llm(srv.url, tmp_path)]
        made = cli("bank", "nuggetize", "--passages", passages, "--topics", queries, "-o", bank, *options)
        assert made.returncode == 0, made.stderr
        assign = ["grade", "assign", "--bank", str(bank), *options]
        assert cli(*assign, answers, "-o", by_file).returncode == 0
        command = [sys.executable, "-m", "rubric", *assign, "-", "-o", str(by_pipe)]
        piped = subprocess.run(command, input=Path(answers).read_bytes(), capture_output=True, env=env)
    assert piped.returncode == 0, piped.stderr.decode()
    assert by_pipe.read_text() == by_file.read_text()
