"""`rubric grade --backend openai` honours --max-input-tokens against a real HTTP server on
127.0.0.1: contexts are cut by the original's rule (its prompt classes) or so the prompt fits
(other prompts), counted with the machine's API tokenizer (conftest: a GPT-2-like byte-level BPE
built offline); 0 sends whole passages; a prompt that cannot fit fails without being sent."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from helpers import BANKS, TINY
from helpers.openai_server import serve

BANK = BANKS / "questions.jsonl"
SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
LONG_CHARS = 23_939  # the passage that hung a run for 23 minutes


def long_pool(cli, tmp_path: Path) -> tuple[Path, str]:
    """The bundled example's pool with its first passage made 23,939 characters long."""
    out = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "--topics", TINY / "queries.tsv", "-C", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", TINY / "run.alpha", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in gzip.decompress(out.read_bytes()).decode().splitlines()]
    first = rows[0][1][0]
    long = (first["text"] + " ") * (LONG_CHARS // (len(first["text"]) + 1) + 1)
    first["text"] = long[:LONG_CHARS]
    out.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    return out, first["text"]


def grade(cli, srv, passages: Path, out: Path, *args: str, prompt: str = SELF):
    return cli("grade", passages, "--bank", BANK, "-p", prompt, "--backend", "openai", "--model", "m",
               "--base-url", srv.url, "--no-cache", "--max-retries", "0", "-o", out, *args)  # fmt: skip


def users(srv) -> list[str]:
    return [next(m["content"] for m in r["body"]["messages"] if m["role"] == "user") for r in srv.requests]


def test_long_passages_are_cut_as_the_original_cut_them(cli, tmp_path, api_tokenizer):
    from tokenizers import Tokenizer

    from rubric.prompting.prompts import get_prompt

    tok = Tokenizer.from_file(str(api_tokenizer / "tokenizer.json"))
    passages, long = long_pool(cli, tmp_path)
    with serve() as srv:
        r = grade(cli, srv, passages, tmp_path / "cut.jsonl.gz")
        assert r.returncode == 0, r.stderr
        sent = users(srv)
    assert sent and all(len(tok.encode(u).ids) <= 512 - 5 + 1 for u in sent)
    prompt = get_prompt(SELF)
    questions = [i["question_text"] for b in map(json.loads, BANK.open()) for i in b["items"]]
    cut = [u for u in sent if long[:200] in u]
    assert cut and all(long not in u for u in cut)
    for u in cut:  # the original's rule: 512 - question tokens - 0 special tokens - 5
        question = next(q for q in questions if u.startswith(prompt.render_parts("", question=q)[0]))
        head, part = prompt.render_parts(long, question=question)
        room = 512 - len(tok.encode(head, add_special_tokens=False).ids) - 5
        ids = (
            tok.encode(head, add_special_tokens=False).ids
            + tok.encode(part, add_special_tokens=False).ids[:room]
        )
        assert u == tok.decode(ids, skip_special_tokens=False)

    with serve() as srv:  # 0: whole passages
        r = grade(cli, srv, passages, tmp_path / "whole.jsonl.gz", "--max-input-tokens", "0")
        assert r.returncode == 0, r.stderr
        assert any(long in u for u in users(srv))


def test_other_prompts_are_cut_to_fit(cli, tmp_path, api_tokenizer):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(api_tokenizer / "tokenizer.json"))
    passages, long = long_pool(cli, tmp_path)
    out = tmp_path / "direct.jsonl.gz"
    with serve() as srv:
        r = cli("grade", "direct", passages, "--topics", TINY / "queries.tsv", "-p", "HELM", "--backend",
                "openai", "--model", "m", "--base-url", srv.url, "--no-cache", "--max-input-tokens", "200",
                "-o", out)  # fmt: skip
        assert r.returncode == 0, r.stderr
        sent = users(srv)
    assert all(len(tok.encode(u).ids) <= 200 for u in sent)
    assert any(long[:100] in u for u in sent)


def test_a_prompt_that_cannot_fit_fails_unsent(cli, tmp_path):
    passages, _ = long_pool(cli, tmp_path)
    out = tmp_path / "none.jsonl.gz"
    with serve() as srv:
        r = grade(cli, srv, passages, out, "--max-input-tokens", "16")
        assert srv.requests == []  # nothing was sent, nothing waited for
    assert r.returncode == 1, r.stderr
    assert "over the input limit of 16" in r.stderr
