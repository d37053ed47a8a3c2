"""Passage text in the formats people have: TSV, JSON lines, a workbench passages file and
RankLLM / Pyserini candidate JSON, told apart by their first line; other text names the formats."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from helpers import FIXTURES
from rubric.convert.pool import pool_file
from rubric.data.collection import FORMATS, load_texts
from rubric.errors import UserError

TINY = FIXTURES / "tiny"
TEXTS = dict(line.split("\t", 1) for line in (TINY / "collection.tsv").read_text().splitlines())


def candidates(texts: dict[str, str]) -> list[dict]:
    """RankLLM's retrieve results: per query its text and hits with docid and content."""
    ids = sorted(texts)
    first = [
        {"content": texts[d], "qid": 1, "docid": d, "rank": r, "score": 10.0 - r}
        for r, d in enumerate(ids[:6], 1)
    ]
    return [
        {"query": "how do bees make honey", "hits": first},
        {
            "query": {"text": "tides", "qid": "2"},
            "hits": [{"contents": texts[d], "docid": d} for d in ids[6:]],
        },
    ]


@pytest.mark.parametrize("indent", [2, None])
def test_rankllm_candidates_json(tmp_path: Path, indent):
    path = tmp_path / "retrieve_results_dl20.json"
    path.write_text(json.dumps(candidates(TEXTS), indent=indent))
    assert load_texts([path]) == TEXTS
    assert load_texts([path], wanted={"d1", "d12"}) == {"d1": TEXTS["d1"], "d12": TEXTS["d12"]}


def test_jsonl_with_pyserini_fields_and_gzip(tmp_path: Path):
    path = tmp_path / "corpus.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.writelines(json.dumps({"id": d, "contents": t}) + "\n" for d, t in TEXTS.items())
    assert load_texts([path]) == TEXTS


def test_workbench_passages_file_is_a_text_source(tmp_path: Path):
    pool = tmp_path / "pool.jsonl.gz"
    pool_file(TINY / "queries.tsv", [TINY / "run.alpha"], [TINY / "collection.tsv"], pool, top_k=3)
    texts = load_texts([pool])
    assert texts and all(TEXTS[d] == t for d, t in texts.items())
    again = tmp_path / "again.jsonl.gz"
    pool_file(TINY / "queries.tsv", [TINY / "run.alpha"], [pool], again, top_k=3)
    assert gzip.open(again).read() == gzip.open(pool).read()


def test_convert_runs_with_candidates_as_collection(cli, tmp_path: Path):
    path = tmp_path / "retrieve_results_dl20.json"
    path.write_text(json.dumps(candidates(TEXTS), indent=2))
    out = tmp_path / "pool.jsonl.gz"
    r = cli("convert", "runs", "--queries", TINY / "queries.tsv", "--collection", path, TINY / "run.alpha",
            "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("d1 no tab here\n", [":1: expected 'docid<TAB>text'", FORMATS]),
        ('[{"query": "q", "results": []}]', ["not of {query, hits} objects", FORMATS]),
        ('[\n{"query": "q", "hits": [{"docid": "d1"}]}\n]', ["query 1, hit 1: no text field"]),
        ('[\n{"query": "q", "hits": [\n', [":2: not valid JSON"]),
        ('["q1", [{"paragraph_id": "d1"}]]\n', [":1: a passage without paragraph_id and text"]),
        ('["q1", []]\n{"id": 1}\n', [":2: expected [query id, [passage, ...]]"]),
    ],
)
def test_bad_text_sources_say_where_and_what_is_accepted(tmp_path: Path, text, fragments):
    path = tmp_path / "texts"
    path.write_text(text)
    with pytest.raises(UserError) as e:
        load_texts([path])
    assert str(e.value).startswith(str(path))
    for fragment in fragments:
        assert fragment in str(e.value)
