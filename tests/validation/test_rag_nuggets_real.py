"""AutoNuggetizer end to end on the real TREC RAG 2024 baseline answers (3 runs, 301 topics),
against the local OpenAI-compatible test server (no real LLM: the checks are about the
pipeline on real files: every topic, run and nugget is accounted for).

Nuggets are created from the answers' own sentences, all judged relevant through a qrels file
(the `--qrels` path that takes LLM judgments such as UMBRELA's).
"""

from __future__ import annotations

import gzip
import json

from helpers.openai_server import serve
from rubric.data.jsonl import read_bank, read_passages


def test_rag24_answers_nuggetize_assign_evaluate(cli, shared, tmp_path):
    folder = shared("ragnarok_data", "rag24-test-answers")
    answers = sorted(folder.glob("*.jsonl"))
    assert len(answers) == 3
    passages, topics = tmp_path / "rag.jsonl.gz", tmp_path / "topics.json"
    args = [x for a in answers for x in ("-a", a)]
    r = cli("convert", "rag", *args, "-o", passages, "--queries-out", topics)
    assert r.returncode == 0, r.stderr
    qrels = tmp_path / "all.qrels"
    with qrels.open("w") as f:
        for q in read_passages(passages):
            for p in q.paragraphs:
                f.write(f"{q.queryId} 0 {p.paragraph_id} 1\n")
    bank, assigned = tmp_path / "nuggets.jsonl.gz", tmp_path / "assigned.jsonl.gz"
    with serve(fail_rate=0.05, seed=11) as srv:
        llm = ("--model", "gpt-test", "--base-url", srv.url, "--concurrency", "32", "--retry-base", "0.01")
        llm += ("--cache", tmp_path / "c.sqlite")
        sizes = ("--window", "20", "--max-nuggets", "20", "--keep", "10")  # fewer calls, same code paths
        r = cli(
            "bank",
            "nuggetize",
            "--passages",
            passages,
            "--topics",
            topics,
            "--qrels",
            qrels,
            *sizes,
            "-o",
            bank,
            *llm,
        )
        assert r.returncode == 0, r.stderr
        banks = list(read_bank(bank))
        assert len(banks) == 301
        assert all(1 <= len(b.items) <= 10 for b in banks)
        assert sum(b.info["trimmed"] for b in banks) > 0
        assert all(b.info["failed_windows"] == [] and b.info["unlabelled"] == 0 for b in banks)
        r = cli("grade", "assign", *answers, "--bank", bank, "-o", assigned, *llm)
        assert r.returncode == 0, r.stderr
        assert srv.failures_sent > 0 and "; 0 assignment batches failed" in r.stderr
    records = [json.loads(line) for line in gzip.open(assigned, "rt")]
    assert len(records) == 3 * 301
    assert all(
        n["assignment"] in ("support", "partial_support", "not_support")
        for r in records
        for n in r["nuggets"]
    )
    r = cli("evaluate", "nuggets", assigned)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()[1:]]
    assert {row[0] for row in rows} == {r["run_id"] for r in records} and len(rows) == 3 * 4
    assert all(0.0 <= float(row[2]) <= 1.0 for row in rows)
    assert {row[4] for row in rows if row[1].startswith("A")} == {"301"}
