"""`rubric.grade`, the Python API: the engine of the command, in memory, on paths or loaded objects."""

from __future__ import annotations

import gzip
import json

import pytest

import rubric
from helpers import BANKS, TINY
from rubric.data.collection import load_texts
from rubric.data.jsonl import read_bank, read_passages, write_passages
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList
from rubric.llm.cache import ResponseCache

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
BANK = BANKS / "questions.jsonl"


@pytest.fixture(scope="module")
def setup(tmp_path_factory, t5_dir):
    root = tmp_path_factory.mktemp("api")
    t5 = t5_dir
    texts = load_texts([TINY / "collection.tsv"])
    pool = root / "passages.jsonl.gz"
    write_passages(
        pool,
        [
            QueryWithFullParagraphList(
                queryId=qid,
                paragraphs=[FullParagraphData(paragraph_id=d, text=t) for d, t in sorted(texts.items())],
            )
            for qid in ("q1", "q2", "q3")
        ],
    )
    return root, t5, pool


def test_grade_equals_the_command_on_paths_and_on_loaded_objects(cli, setup):
    root, t5, pool = setup
    out = root / "cli.jsonl.gz"
    r = cli("grade", pool, "--bank", BANK, "-p", SELF, "-m", t5, "--device", "cpu", "--no-cache", "-o", out)
    assert r.returncode == 0, r.stderr
    written = [json.loads(line) for line in gzip.decompress(out.read_bytes()).decode().splitlines()]
    graded = rubric.grade(pool, BANK, SELF, "hf-seq2seq", model=str(t5), device="cpu")
    assert [q.to_json() for q in graded.queries] == written
    assert graded.stats.pairs > 0 and graded.stats.failures == 0 and graded.stats.failed == []
    again = rubric.grade(list(read_passages(pool)), list(read_bank(BANK)), [SELF], graded_backend(t5))
    assert [q.to_json() for q in again.queries] == written
    graded.write(root / "api.jsonl.gz")
    assert gzip.decompress((root / "api.jsonl.gz").read_bytes()) == gzip.decompress(out.read_bytes())


def graded_backend(t5):
    from rubric.llm.registry import make_backend

    return make_backend("hf-seq2seq", str(t5), device="cpu")


def test_direct_grading_and_the_cache(setup):
    root, t5, pool = setup
    cache = root / "cache.sqlite"
    queries = {"q1": "how do bees make honey", "q2": "why is the sky blue", "q3": "what causes tides"}
    first = rubric.grade(pool, None, ["Sun"], "hf-seq2seq", queries=queries, model=str(t5), cache=cache)
    assert all(p.grades and p.grades[0].prompt_class == "Sun" for q in first.queries for p in q.paragraphs)
    second = rubric.grade(
        pool, None, "Sun", "hf-seq2seq", queries=queries, model=str(t5), cache=ResponseCache(cache)
    )
    assert second.stats.cached == second.stats.pairs == first.stats.pairs
    assert [q.to_json() for q in second.queries] == [q.to_json() for q in first.queries]
