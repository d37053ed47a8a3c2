"""`rubric convert runs` / `rag` as library verbs: checks first, the file written, the summary lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import FIXTURES
from rubric.convert.pool import pool_file
from rubric.convert.rag import answers_file
from rubric.data.jsonl import read_passages
from rubric.errors import UserError

TINY = FIXTURES / "tiny"


def test_pool_file_writes_the_pool_and_sums_up(tmp_path: Path):
    out = tmp_path / "pool.jsonl.gz"
    runs = [TINY / "run.alpha", TINY / "run.beta"]
    lines = pool_file(
        TINY / "queries.tsv", runs, [TINY / "collection.tsv"], out, qrels=TINY / "qrels.txt", top_k=2
    )
    pool = list(read_passages(out))
    passages = sum(len(q.paragraphs) for q in pool)
    assert lines[-1].startswith(f"wrote {out}: {len(pool)} queries, {passages} passages (")
    assert lines[-1].endswith(" from 2 runs")
    assert all(len(q.paragraphs) >= 1 for q in pool)


def test_pool_file_checks_options_before_reading(tmp_path: Path):
    missing = tmp_path / "no-such-queries.tsv"
    with pytest.raises(UserError, match="name_from: expected one of tag, file, got 'x'"):
        pool_file(
            missing, [TINY / "run.alpha"], [TINY / "collection.tsv"], tmp_path / "o.jsonl", name_from="x"
        )
    with pytest.raises(UserError, match="give at least one run"):
        pool_file(missing, [], [TINY / "collection.tsv"], tmp_path / "o.jsonl")


def test_answers_file_writes_passages_and_topics(tmp_path: Path):
    out, topics = tmp_path / "rag.jsonl.gz", tmp_path / "topics.json"
    line = answers_file([TINY / "rag.jsonl"], out, segment="sentence", queries_out=topics)
    pool = list(read_passages(out))
    assert [q.queryId for q in pool] == ["q1"]
    assert line == f"wrote {out}: 1 topics, {len(pool[0].paragraphs)} passages from 2 runs"
    assert json.loads(topics.read_text()) == {"q1": "how do bees make honey"}


def test_answers_file_refuses_a_bad_segment_and_no_answers(tmp_path: Path):
    with pytest.raises(UserError, match="^segment: expected"):
        answers_file([tmp_path / "not-read.jsonl"], tmp_path / "o.jsonl", segment="paragraphs")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(UserError, match="empty.jsonl: no RAG answers in the file"):
        answers_file([empty], tmp_path / "o.jsonl")
    assert not (tmp_path / "o.jsonl").exists()
