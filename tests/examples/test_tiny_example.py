"""The bundled example collection (examples/tiny) is consistent, loads with our readers, and converts."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rubric.data.collection import load_texts
from rubric.data.jsonl import read_bank, read_passages
from rubric.data.models import NuggetItem, QuestionItem
from rubric.data.queries import read_queries
from rubric.data.trec import expand_paths, read_qrels, read_run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny"


def md5_id(query_id: str, text: str) -> str:
    return f"{query_id}/{hashlib.md5(text.strip().encode('utf-8')).hexdigest()}"


@pytest.fixture(scope="module")
def example():
    queries = read_queries(EXAMPLE / "queries.json")
    texts = load_texts([EXAMPLE / "collection.tsv"])
    qrels = read_qrels(EXAMPLE / "qrels.txt")
    runs = [read_run(p) for p in expand_paths([EXAMPLE / "runs"])]
    return queries, texts, qrels, runs


def test_sizes_and_grades(example):
    queries, texts, qrels, runs = example
    assert len(queries) == 5
    assert len(texts) == 60
    assert len(runs) == 3
    assert set(qrels) == set(queries)
    for qid, judged in qrels.items():
        grades = sorted(judged.values())
        # every query has highly relevant, partially relevant and off-topic passages
        assert grades[-1] == 3 and 1 in grades and grades[0] == 0, qid
    assert all(t.strip() and len(t.split()) >= 8 for t in texts.values())


def test_runs_rank_judged_passages_and_differ_in_quality(example):
    import pytrec_eval

    queries, texts, qrels, runs = example
    judged = {(q, d) for q, docs in qrels.items() for d in docs}
    assert judged == {(q, d) for q in qrels for d in qrels[q] if d in texts}
    ndcg = {}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    for run in runs:
        assert set(run.scores) == set(queries), run.name
        for qid, docs in run.scores.items():
            assert len(docs) == 10
            assert {(qid, d) for d in docs} <= judged, (run.name, qid)
        per_query = evaluator.evaluate(run.scores)
        ndcg[run.name] = sum(v["ndcg_cut_10"] for v in per_query.values()) / len(per_query)
    # a clear leaderboard order, with visible gaps, for the walkthrough's correlation step
    assert ndcg["dense-rerank"] > ndcg["bm25"] + 0.1 > ndcg["title-match"] + 0.2, ndcg


@pytest.mark.parametrize("name,kind", [("questions.jsonl", QuestionItem), ("nuggets.jsonl", NuggetItem)])
def test_banks_follow_the_id_convention(example, name, kind):
    queries = example[0]
    banks = list(read_bank(EXAMPLE / name))
    assert [b.query_id for b in banks] == list(queries)
    for bank in banks:
        assert bank.query_text == queries[bank.query_id]
        assert len(bank.items) >= 5
        for item in bank.items:
            assert isinstance(item, kind)
            assert item.query_id == bank.query_id
            assert item.item_id == md5_id(bank.query_id, item.item_text)
            if kind is QuestionItem:
                assert item.gold_answers and all(a.strip() for a in item.gold_answers)
            else:
                assert item.importance in ("vital", "okay")


def test_convert_pools_every_ranked_passage_with_text_and_judgment(cli, tmp_path):
    out = tmp_path / "tiny.jsonl.gz"
    result = cli(
        "convert", "runs", "--topics", EXAMPLE / "queries.json", "--collection", EXAMPLE / "collection.tsv",
        "--qrels", EXAMPLE / "qrels.txt", "--top-k", "10", EXAMPLE / "runs", "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    pooled = {q.queryId: q.paragraphs for q in read_passages(out)}
    assert len(pooled) == 5
    assert sum(len(p) for p in pooled.values()) == 60  # qrels are added to the pool
    for paragraphs in pooled.values():
        for p in paragraphs:
            assert p.text and p.paragraph_data.judgments
