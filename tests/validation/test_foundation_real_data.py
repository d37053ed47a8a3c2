"""Foundation against real third-party data (skipped where ../shared/data is absent)."""

from __future__ import annotations

import json

import pytest

from rubric.data.files import open_text
from rubric.data.jsonl import read_bank, read_passages
from rubric.data.trec import read_qrels

ORIGINAL_FILES = [
    ("rubric-llm-judge", "all-ExtraTrees", "dev.jsonl.gz"),
    ("naghmefarzi-llmjudge", "rubric_format_inputs", "dl2019_test_4prompts_llama70b.jsonl.gz"),
]
BANKS = ["dl19-questions", "dl19-nuggets", "dl20-questions", "dl20-nuggets", "car-questions", "car-nuggets"]


@pytest.mark.parametrize("parts", ORIGINAL_FILES, ids=lambda p: p[-1])
def test_original_passage_files_round_trip_without_loss(shared, parts):
    path = shared(*parts)
    with open_text(path) as f:
        raw = [json.loads(line) for line in f if line.strip()]
    merged: dict[str, list] = {}  # some files hold one line per passage: a query's lines are merged
    for qid, paragraphs in raw:
        merged.setdefault(qid, []).extend(paragraphs)
    ours = [q.to_json() for q in read_passages(path)]
    assert ours == [[qid, paragraphs] for qid, paragraphs in merged.items()]
    assert sum(len(p) for _, p in ours) == sum(len(p) for _, p in raw)


@pytest.mark.parametrize("name", BANKS)
def test_original_banks_round_trip_without_loss(shared, name):
    path = shared("rubric-workbench", "rubric-evaluation", "phase1-data", f"{name}.jsonl.gz")
    with open_text(path) as f:
        raw = [json.loads(line) for line in f if line.strip()]
    banks = list(read_bank(path))
    assert [b.to_json() for b in banks] == raw
    kind = "question" if "questions" in name else "nugget"
    assert {b.kind for b in banks} == {kind}


@pytest.mark.slow
def test_convert_dl19_pools_every_judged_pair_with_text(cli, shared, tmp_path):
    topics = shared("anserini-tools", "topics.dl19-passage.txt")
    qrels_path = shared("anserini-tools", "qrels.dl19-passage.txt")
    collection = shared("naghmefarzi-llmjudge", "dl2019_document.jsonl")
    runs = shared("naghmefarzi-llmjudge", "dl19-runs")
    out = tmp_path / "dl19.jsonl.gz"
    r = cli(
        "convert",
        "runs",
        "--topics",
        topics,
        "--collection",
        collection,
        "--qrels",
        qrels_path,
        "--top-k",
        "20",
        "--run",
        runs,
        "-o",
        out,
        "--allow-missing",
    )
    assert r.returncode == 0, r.stderr
    qrels = read_qrels(qrels_path)
    seen = {}
    methods = set()
    for q in read_passages(out):
        for p in q.paragraphs:
            assert p.text
            for j in p.paragraph_data.judgments:
                seen[(j.query, j.paragraphId)] = j.relevance
            methods.update(r.method for r in p.paragraph_data.rankings)
            for r_ in p.paragraph_data.rankings:
                assert 1 <= r_.rank <= 20
    expected = {(q, d): rel for q, docs in qrels.items() for d, rel in docs.items()}
    assert len(expected) == 9260
    assert seen == expected
    assert len(methods) == 37
