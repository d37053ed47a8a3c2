"""`rubric grade --backend openai` against a real HTTP server on 127.0.0.1 (tests/helpers/openai_server.py).

The server rates a question 0-5 by the share of its words found in the passage and answers
HELM Yes/No the same way, so every grade in the output can be recomputed here.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from helpers import BANKS, TINY
from helpers.openai_server import _overlap as overlap
from helpers.openai_server import serve

BANK = BANKS / "questions.jsonl"
SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"


def lines(path: Path) -> list:
    return [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]


def pool(cli, tmp_path: Path) -> Path:
    out = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "--topics", TINY / "queries.tsv", "-C", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", TINY / "run.alpha", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def test_openai_backend_grades_with_retries_and_cache(cli, tmp_path):
    passages = pool(cli, tmp_path)
    questions = {
        i["question_id"]: i["question_text"] for b in map(json.loads, BANK.open()) for i in b["items"]
    }
    key = tmp_path / "key.txt"
    key.write_text("sk-test-secret-123\n")
    out, cache = tmp_path / "graded.jsonl.gz", tmp_path / "cache.sqlite"
    with serve(fail_rate=0.3, seed=7) as srv:
        args = ["grade", passages, "--bank", BANK, "-p", SELF, "--backend", "openai", "--model", "test-model",
                "--base-url", srv.url, "--api-key-file", key, "--cache", cache, "-o", out]  # fmt: skip
        r = cli(*args, "--retry-base", "0.05")
        assert r.returncode == 0, r.stderr
        retried = sum(1 for q in srv.requests if q["attempt"] > 0)
        assert retried > 0  # the 30% failures happened and were retried
        asked = len(srv.requests)
        r2 = cli(*args[:-2], "-o", tmp_path / "again.jsonl.gz", "--retry-base", "0.05")
        assert r2.returncode == 0, r2.stderr
        assert len(srv.requests) == asked  # second run: every answer from the cache
    graded = lines(out)
    n = 0
    for _, passages_of_query in graded:
        for p in passages_of_query:
            (rec,) = p["exam_grades"]
            assert rec["llm"] == "test-model" and rec["prompt_info"]["prompt_class"] == SELF
            for r_ in rec["self_ratings"]:
                assert r_["self_rating"] == round(5 * overlap(questions[r_["question_id"]], p["text"]))
                n += 1
    assert n > 0
    assert lines(tmp_path / "again.jsonl.gz") == graded
    for f in (out, cache):
        assert b"sk-test-secret-123" not in (
            gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
        )


def test_openai_backend_direct_prompt(openai_server, cli, tmp_path):
    passages = pool(cli, tmp_path)
    out = tmp_path / "direct.jsonl.gz"
    srv = openai_server
    r = cli("grade", "direct", passages, "--topics", TINY / "queries.tsv", "-p", "HELM", "--backend",
            "openai", "--model", "test-model", "--base-url", srv.url, "--no-cache", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    queries = dict(line.split("\t") for line in (TINY / "queries.tsv").read_text().splitlines())
    for qid, ps in lines(out):
        for p in ps:
            (g,) = p["grades"]
            expected = overlap(queries[qid].strip(), p["text"]) >= 0.5
            assert g["correctAnswered"] is expected


def test_openai_backend_rejects_beams(cli, tmp_path, user_error):
    passages = pool(cli, tmp_path)
    r = cli(
        "grade",
        passages,
        "--bank",
        BANK,
        "-p",
        SELF,
        "--backend",
        "openai",
        "--model",
        "x",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--num-beams",
        "5",
        "--no-cache",
        "-o",
        tmp_path / "o.jsonl.gz",
    )
    user_error(r, "--num-beams")
