"""Queries in JSON / TSV / JSONL and passage texts from TSV / JSONL collections."""

from __future__ import annotations

import json

import pytest

from rubric.data.collection import load_texts
from rubric.data.queries import read_queries, write_queries
from rubric.errors import UserError


def test_queries_formats(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps({"1": "bees", "2": "sky"}))
    (tmp_path / "q.tsv").write_text("1\tbees\n2\tsky\n")
    (tmp_path / "q.jsonl").write_text('{"id": "1", "title": "bees"}\n{"qid": "2", "query": "sky"}\n')
    for name in ("q.json", "q.tsv", "q.jsonl"):
        assert read_queries(tmp_path / name) == {"1": "bees", "2": "sky"}


def test_queries_round_trip_all_formats(tmp_path):
    qs = {"1": "bees make honey", "x-2": "why is the sky blue"}
    for fmt in ("json", "tsv", "jsonl"):
        write_queries(tmp_path / f"out.{fmt}", qs, fmt)
        assert read_queries(tmp_path / f"out.{fmt}") == qs


def test_queries_errors(tmp_path):
    (tmp_path / "bad.tsv").write_text("1\tbees\n2\n")
    with pytest.raises(UserError, match=r"bad\.tsv:2: expected 'query_id<TAB>query text'"):
        read_queries(tmp_path / "bad.tsv")
    (tmp_path / "bad.jsonl").write_text('{"id": "1", "title": "x"}\n{"id": "2"}\n')
    with pytest.raises(UserError, match=r"bad\.jsonl:2: no query text"):
        read_queries(tmp_path / "bad.jsonl")


def test_collection_tsv_and_jsonl_keep_only_wanted(tmp_path):
    (tmp_path / "c.tsv").write_text("a\tfirst text\nb\tsecond\textra column\n")
    (tmp_path / "c.jsonl").write_text(
        '{"docid": "c", "doc": "third"}\n{"id": "d", "contents": "fourth"}\n'
        '{"segment_id": "e#1", "title": "T", "segment": "fifth"}\n'
    )
    texts = load_texts([tmp_path / "c.tsv", tmp_path / "c.jsonl"], wanted={"b", "c", "e#1"})
    assert texts == {"b": "second extra column", "c": "third", "e#1": "T fifth"}


def test_collection_errors_name_the_line(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"docid": "a", "text": "x"}\n{"docid": "b"}\n')
    with pytest.raises(UserError, match=r"c\.jsonl:2: no text field"):
        load_texts([tmp_path / "c.jsonl"])
