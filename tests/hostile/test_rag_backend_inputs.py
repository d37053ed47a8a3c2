"""Hostile options of `bank nuggetize` and `grade assign` since they take any backend and a query
subset (issue 40): each is one error line naming the option or file (exit 2), before any model
loads or request is sent, and no output is written."""

from __future__ import annotations

import json

import pytest

from helpers.openai_server import serve

PASSAGES = [("p1", 2, "Bees collect nectar from flowers."), ("p2", 0, "Cars are loud.")]


@pytest.fixture
def inputs(tmp_path):
    from rubric.data.jsonl import write_passages
    from rubric.data.models import FullParagraphData, Judgment, ParagraphData, QueryWithFullParagraphList

    paras = [
        FullParagraphData(
            paragraph_id=pid,
            text=text,
            paragraph_data=ParagraphData(judgments=[Judgment(paragraphId=pid, query="q1", relevance=rel)]),
        )
        for pid, rel, text in PASSAGES
    ]
    passages = tmp_path / "p.jsonl.gz"
    write_passages(passages, [QueryWithFullParagraphList(queryId="q1", paragraphs=paras)])
    (tmp_path / "q.json").write_text(json.dumps({"q1": "how do bees make honey"}))
    (tmp_path / "n.tsv").write_text("q1\tBees collect nectar\tvital\n")
    answer = {"run_id": "runA", "topic_id": "q1", "topic": "how do bees make honey", "references": [],
              "answer": [{"text": "Bees collect nectar."}]}  # fmt: skip
    (tmp_path / "answers.jsonl").write_text(json.dumps(answer) + "\n")
    return passages, tmp_path / "q.json", tmp_path / "n.tsv"


def commands(cli, tmp_path, inputs) -> dict[str, list]:
    passages, queries, nuggets_tsv = inputs
    bank = tmp_path / "n.jsonl"
    if not bank.exists():
        assert cli("bank", "import", nuggets_tsv, "--kind", "nuggets", "-o", bank).returncode == 0
    return {
        "nuggetize": ["bank", "nuggetize", "--passages", passages, "--topics", queries],
        "assign": ["grade", "assign", tmp_path / "answers.jsonl", "--bank", bank],
    }


BAD = [
    (["--backend", "nope", "--model", "m"], "--backend: unknown backend 'nope'; known: ct2-causal"),
    (["--backend", "hf-qa", "--model", "m"], "--backend hf-qa: writes no text"),
    (
        ["--backend", "hf-causal", "--model", "minilm-l6"],
        "--model minilm-l6: a model for --backend embedding",
    ),
    (
        ["--backend", "hf-causal", "--model", "smollm2-135m", "--temperature", "0.7"],
        "--temperature 0.7: the hf-causal backend decodes greedily",
    ),  # fmt: skip
    (
        ["--backend", "hf-causal", "--model", "smollm2-135m", "--max-input-tokens", "4"],
        "--max-input-tokens: must be at least 16, got 4",
    ),  # fmt: skip
    (
        ["--backend", "hf-causal", "--model", "smollm2-135m", "--num-beams", "0"],
        "--num-beams: must be at least 1, got 0",
    ),  # fmt: skip
    (["--model", "m", "--query", "nope"], "--query/--queries: none of the selected queries is in"),
    (["--model", "m", "--query", " "], "--query: a query id cannot be empty"),
]


@pytest.mark.parametrize("command", ["nuggetize", "assign"])
@pytest.mark.parametrize(("options", "message"), BAD, ids=[" ".join(o) for o, _ in BAD])
def test_bad_backend_and_query_options(cli, user_error, tmp_path, inputs, command, options, message):
    out = tmp_path / "out.jsonl"
    with serve() as srv:  # never asked: every error comes before any request
        r = cli(*commands(cli, tmp_path, inputs)[command], *options, "--base-url", srv.url, "-o", out)
        assert srv.requests == []
    user_error(r, message)
    assert not out.exists()


def test_embedding_does_not_nuggetize(cli, user_error, tmp_path, inputs):
    out = tmp_path / "out.jsonl"
    r = cli(*commands(cli, tmp_path, inputs)["nuggetize"], "--backend", "embedding", "--model", "minilm-l6",
            "-o", out)  # fmt: skip
    user_error(r, "--backend embedding: writes no text, and this command asks the model for lists")
    assert not out.exists()


@pytest.mark.parametrize("command", ["nuggetize", "assign"])
def test_a_missing_model_folder_is_named(cli, user_error, tmp_path, inputs, command):
    out = tmp_path / "out.jsonl"
    missing = tmp_path / "no-such-model"
    r = cli(*commands(cli, tmp_path, inputs)[command], "--backend", "hf-causal", "--model", missing,
            "--no-cache", "-o", out)  # fmt: skip
    user_error(r, f"--model {missing}: cannot load it")
    assert not out.exists()


@pytest.mark.parametrize("command", ["nuggetize", "assign"])
@pytest.mark.parametrize("queries", ["missing.txt", "empty.txt", "folder"])
def test_bad_queries_files(cli, user_error, tmp_path, inputs, command, queries):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "folder").mkdir()
    out = tmp_path / "out.jsonl"
    r = cli(*commands(cli, tmp_path, inputs)[command], "--model", "m", "--queries", tmp_path / queries,
            "-o", out)  # fmt: skip
    user_error(r, queries)
    assert not out.exists()
