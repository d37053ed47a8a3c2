"""A new user's first hour on TREC DL 2020 with rank_llm's files: the five first-stage runs all
named ``trec_results_dl20.txt`` and tagged ``rank`` are named on the command line, and RankLLM's
own candidate JSON is the passage text of `convert runs`."""

from __future__ import annotations

from rubric.data.jsonl import read_passages

RETRIEVERS = ("BM25", "BM25_RM3", "D_BERT_KD_TASB", "OPEN_AI_ADA2", "SPLADE_P_P_ENSEMBLE_DISTIL")


def test_named_first_stage_runs_and_rankllm_text(cli, shared, tmp_path):
    root = shared("rank_llm", "retrieve_results")
    qrels = shared("anserini-tools", "qrels.dl20-passage.txt")
    topics = shared("anserini-tools", "derived", "topics.dl20-passage.judged.txt")
    named = [
        arg for r in RETRIEVERS for arg in ("--run", f"{r.lower()}={root / r / 'trec_results_dl20.txt'}")
    ]
    board = cli("evaluate", "leaderboard", *named, "--qrels", qrels, "-m", "ndcg_cut.10", "-l", "2")
    assert board.returncode == 0, board.stderr
    assert sorted(line.split("\t")[0] for line in board.stdout.splitlines()[1:]) == sorted(
        r.lower() for r in RETRIEVERS
    )
    same = cli("evaluate", "leaderboard", *named[:2], "--run", root / "BM25_RM3" / "trec_results_dl20.txt",
               "--run", root / "BM25" / "trec_results_dl20.txt", "--qrels", qrels, "-m", "P.10")  # fmt: skip
    assert same.returncode == 2 and "run name 'rank'" in same.stderr and "BM25_RM3" in same.stderr

    out = tmp_path / "pool.jsonl.gz"
    texts = root / "BM25" / "retrieve_results_dl20.json"
    r = cli("convert", "runs", "--queries", topics, "--collection", texts, "--top-k", "10",
            f"bm25={root / 'BM25' / 'trec_results_dl20.txt'}", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    pool = list(read_passages(out))
    assert len(pool) == 54 and sum(len(q.paragraphs) for q in pool) == 540
    assert all(p.text for q in pool for p in q.paragraphs)
