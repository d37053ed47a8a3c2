"""Hostile LLM servers and options, through the real CLI: every command that calls a model.

A reply that is not a chat completion (cut-off JSON, an HTML page, ``choices: null``, numeric
content, no message, ...) is a failure of that prompt: retried, then listed with its cause and
counted, exit 1, every other prompt answered -- never a traceback. The API key never shows in
what we print or store, even when the server echoes it. A cache file that is not a cache, and an
option out of range, are one error line (exit 2) before any request.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from helpers import openai_server as server
from helpers.openai_server import HOSTILE_REPLIES as HOSTILE
from helpers.openai_server import Fault, serve
from rubric.data.jsonl import write_passages
from rubric.data.models import FullParagraphData, Judgment, ParagraphData, QueryWithFullParagraphList

KINDS = sorted(HOSTILE)
KEY = "sk-hostile-test-key-0815"
SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"


def marker(i: int) -> str:
    return f"[hostile {i}]"


def hostile_faults() -> dict:
    return {
        marker(i): Fault(200, HOSTILE[k], "text/html" if HOSTILE[k].startswith(b"<") else "application/json")
        for i, k in enumerate(KINDS)
    }


def llm(srv, tmp_path, *extra) -> list:
    return ["--model", "test-model", "--base-url", srv.url, "--retry-base", "0.01", "--max-retries", "1",
            "--cache", tmp_path / "cache.sqlite", *extra]  # fmt: skip


def asked(srv, text: str) -> int:
    return sum(text in m["content"] for r in srv.requests for m in r["body"]["messages"])


def one_item_bank(path: Path, nugget: bool = False) -> Path:
    """A bank for query q1 with one question (or one vital nugget)."""
    if nugget:
        item = {
            "query_id": "q1",
            "nugget_id": "q1/n",
            "nugget_text": "bees collect nectar",
            "importance": "vital",
        }
    else:
        item = {"query_id": "q1", "question_id": "q1/a", "question_text": "What do bees collect?"}
    path.write_text(json.dumps({"query_id": "q1", "query_text": "bees", "items": [item]}) + "\n")
    return path


def passages_file(path: Path, texts: list[str]) -> Path:
    """Query q1 with one passage per text (d0, d1, ...), each judged relevant."""
    write_passages(
        path,
        [
            QueryWithFullParagraphList(
                queryId="q1",
                paragraphs=[
                    FullParagraphData(
                        paragraph_id=f"d{k}",
                        text=text,
                        paragraph_data=ParagraphData(
                            judgments=[Judgment(paragraphId=f"d{k}", query="q1", relevance=2)]
                        ),
                    )
                    for k, text in enumerate(texts)
                ],
            )
        ],
    )
    return path


def answers_file(path: Path, runs: dict[str, str]) -> Path:
    """A TREC RAG answers file: one answer to q1 per run."""
    records = [
        {"run_id": run, "topic_id": "q1", "topic": "bees", "references": [], "answer": [{"text": text}]}
        for run, text in runs.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def check_listed(r, expected_failures: int) -> None:
    """Exit 1, each hostile prompt listed with 'unreadable reply', no traceback."""
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    listed = [line for line in r.stderr.splitlines() if line.lstrip().startswith("failed:")]
    assert len(listed) == expected_failures, r.stderr
    assert all("unreadable reply (" in line for line in listed), listed


def test_bank_generate(cli, tmp_path):
    queries = {"ok": "fine topic"} | {f"h{i}": f"topic {marker(i)}" for i in range(len(KINDS))}
    (tmp_path / "q.json").write_text(json.dumps(queries))
    out = tmp_path / "bank.jsonl"
    with serve(faults=hostile_faults()) as srv:
        r = cli(
            "bank",
            "generate",
            "--topics",
            tmp_path / "q.json",
            "--parse-retries",
            "0",
            "-o",
            out,
            *llm(srv, tmp_path),
        )
        check_listed(r, len(KINDS))
        assert all(asked(srv, marker(i)) == 2 for i in range(len(KINDS)))  # each retried once
    assert f"wrote 1 of {len(queries)} banks" in r.stderr and "cut-off JSON" not in r.stderr
    assert "failed: h0: no answer from the LLM (unreadable reply (" in r.stderr
    assert [json.loads(line)["query_id"] for line in out.read_text().splitlines()] == ["ok"]


def test_bank_nuggetize(cli, tmp_path):
    queries = {"ok": "fine topic"} | {f"h{i}": f"topic {i}" for i in range(len(KINDS))}
    rows = {"ok": "Bees collect nectar from flowers."} | {
        f"h{i}": f"Passage {i} about wax {marker(i)}." for i in range(len(KINDS))
    }
    write_passages(
        tmp_path / "p.jsonl.gz",
        [
            QueryWithFullParagraphList(
                queryId=q,
                paragraphs=[
                    FullParagraphData(
                        paragraph_id=f"{q}-p",
                        text=text,
                        paragraph_data=ParagraphData(
                            judgments=[Judgment(paragraphId=f"{q}-p", query=q, relevance=2)]
                        ),
                    )
                ],  # fmt: skip
            )
            for q, text in rows.items()
        ],
    )
    (tmp_path / "q.json").write_text(json.dumps(queries))
    out = tmp_path / "nuggets.jsonl"
    with serve(faults=hostile_faults()) as srv:
        r = cli("bank", "nuggetize", "--passages", tmp_path / "p.jsonl.gz", "--topics", tmp_path / "q.json",
                "--parse-retries", "0", "-o", out, *llm(srv, tmp_path))  # fmt: skip
    check_listed(r, len(KINDS))
    assert "failed: h0 window 1: no answer from the LLM (unreadable reply (" in r.stderr
    banks = {b["query_id"]: b for b in map(json.loads, out.read_text().splitlines())}
    assert banks["ok"]["items"] and banks["h0"]["info"]["failed_windows"] == [1]


def test_grade(cli, tmp_path):
    texts = ["Bees collect nectar from flowers."] + [f"Wax {marker(i)} passage." for i in range(len(KINDS))]
    passages_file(tmp_path / "p.jsonl.gz", texts)
    bank = one_item_bank(tmp_path / "bank.jsonl")
    out = tmp_path / "graded.jsonl.gz"
    with serve(faults=hostile_faults()) as srv:
        r = cli("grade", tmp_path / "p.jsonl.gz", "--bank", bank, "-p", SELF, "--backend", "openai",
                "-o", out, *llm(srv, tmp_path))  # fmt: skip
        check_listed(r, len(KINDS))
        assert all(asked(srv, marker(i)) == 4 for i in range(len(KINDS)))  # 2 attempts, twice (second chance)
    assert f"failed: query q1 passage d1 item q1/a prompt {SELF}: unreadable reply (" in r.stderr
    ((qid, passages),) = [
        json.loads(line) for line in gzip.decompress(out.read_bytes()).decode().splitlines()
    ]
    assert [bool(p.get("exam_grades")) for p in passages] == [True] + [False] * len(KINDS)


def test_grade_assign(cli, tmp_path):
    nuggets = one_item_bank(tmp_path / "nuggets.jsonl", nugget=True)
    runs = {"ok": "Bees collect nectar."} | {f"run{i}": f"Answer {marker(i)}." for i in range(len(KINDS))}
    answers = answers_file(tmp_path / "answers.jsonl", runs)
    out = tmp_path / "assigned.jsonl"
    with serve(faults=hostile_faults()) as srv:
        r = cli(
            "grade",
            "assign",
            answers,
            "--bank",
            nuggets,
            "--parse-retries",
            "0",
            "-o",
            out,
            *llm(srv, tmp_path),
        )
    check_listed(r, len(KINDS))
    records = {rec["run_id"]: rec for rec in map(json.loads, out.read_text().splitlines())}
    assert records["ok"]["nuggets"][0]["assignment"] == "support"
    assert records["run0"]["failed_batches"] == 1 and records["run0"]["nuggets"][0]["assignment"] is None


def test_the_api_key_is_never_printed_or_stored_even_when_the_server_echoes_it(cli, tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    (tmp_path / "q.json").write_text(json.dumps({"ok": "fine topic", "bad": "topic ECHO"}))
    passages_file(tmp_path / "p.jsonl.gz", ["bees", "ECHO"])
    bank = one_item_bank(tmp_path / "bank.jsonl")

    def echo(user, system):  # a server that puts the key into its answers, too
        return f"4 {KEY}" if "bees" in user else server.scripted_answer(user, system)

    with serve(api_key=KEY, answer=echo, faults={"ECHO": Fault(500, echo_auth=True)}) as srv:
        args = [*llm(srv, tmp_path), "--api-key-file", key_file]
        gen = cli(
            "bank", "generate", "--topics", tmp_path / "q.json", "-o", tmp_path / "bank-out.jsonl", *args
        )
        graded = tmp_path / "graded.jsonl.gz"
        grade = cli("grade", tmp_path / "p.jsonl.gz", "--bank", bank, "-p", SELF, "--backend", "openai",
                    "-o", graded, *args)  # fmt: skip
        assert any(r["auth"] == f"Bearer {KEY}" for r in srv.requests)  # it was sent, and echoed
    for r in (gen, grade):
        assert r.returncode == 1 and "[redacted]" in r.stderr, r.stderr
        assert KEY not in r.stderr + r.stdout
    stored = [tmp_path / "bank-out.jsonl", tmp_path / "cache.sqlite", tmp_path / "cache.sqlite-wal"]
    blobs = [p.read_bytes() for p in stored if p.exists()] + [gzip.decompress(graded.read_bytes())]
    assert all(KEY.encode() not in blob for blob in blobs)
    assert b"[redacted]" in gzip.decompress(graded.read_bytes())  # the answer that echoed it


@pytest.mark.parametrize("command", ["grade", "grade-openai", "generate", "nuggetize", "assign"])
def test_a_cache_file_that_is_not_a_cache(cli, user_error, tmp_path, command):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not an sqlite file, just text that happens to be here\n" * 40)
    passages = passages_file(tmp_path / "p.jsonl.gz", ["bees collect nectar"])
    bank, nuggets = one_item_bank(tmp_path / "bank.jsonl"), one_item_bank(tmp_path / "n.jsonl", nugget=True)
    (tmp_path / "q.json").write_text(json.dumps({"q1": "bees"}))
    out = tmp_path / "out.jsonl"
    api = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    args = {
        "grade": ["grade", passages, "--bank", bank, "-p", SELF, "--model", tmp_path / "no-model"],
        "grade-openai": ["grade", passages, "--bank", bank, "-p", SELF, "--backend", "openai", *api],
        "generate": ["bank", "generate", "--topics", tmp_path / "q.json", *api],
        "nuggetize": ["bank", "nuggetize", "--passages", passages, "--topics", tmp_path / "q.json", *api],
        "assign": [
            "grade",
            "assign",
            answers_file(tmp_path / "a.jsonl", {"r": "bees"}),
            "--bank",
            nuggets,
            *api,
        ],
    }[command]
    r = cli(*args, "--cache", garbage, "-o", out)
    user_error(r, f"--cache {garbage}: cannot open the response cache (file is not a database)")
    assert not out.exists()


RANGES = [
    ("--timeout", "-1", "--timeout: must be a positive number of seconds, got -1"),
    ("--concurrency", "0", "--concurrency: must be at least 1, got 0"),
    ("--rpm", "0", "--rpm: must be a positive number, got 0"),
    ("--max-retries", "-1", "--max-retries: must be 0 or more, got -1"),
    ("--retry-base", "-2", "--retry-base: must be 0 or more seconds, got -2"),
]
BANK_RANGES = RANGES + [
    ("--parse-retries", "-1", "--parse-retries: must be at least 0, got -1"),
    ("--temperature", "5", "--temperature: must be 0 to 2, got 5"),
    ("--max-new-tokens", "0", "--max-new-tokens: must be at least 1, got 0"),
    ("--max-input-tokens", "8", "--max-input-tokens: must be at least 16, got 8"),
    ("--backend", "nope", "--backend: unknown backend 'nope'"),
    ("--backend", "hf-qa", "--backend hf-qa: writes no text"),
]
GRADE_RANGES = RANGES + [
    ("--batch-size", "-1", "--batch-size: must be at least 0, got -1"),
    ("--token-budget", "-5", "--token-budget: must be at least 0, got -5"),
    ("--max-input-tokens", "8", "--max-input-tokens: must be at least 16, got 8"),
    ("--max-new-tokens", "0", "--max-new-tokens: must be at least 1, got 0"),
    ("--num-beams", "0", "--num-beams: must be at least 1, got 0"),
    ("--checkpoint-pairs", "0", "--checkpoint-pairs: must be at least 1, got 0"),
    ("--workers", "-1", "--workers: must be at least 0, got -1"),
]


@pytest.mark.parametrize(("option", "value", "message"), GRADE_RANGES, ids=[c[0] for c in GRADE_RANGES])
def test_grade_option_ranges(cli, user_error, tmp_path, option, value, message):
    passages = passages_file(tmp_path / "p.jsonl.gz", ["bees collect nectar"])
    out = tmp_path / "out.jsonl.gz"
    # a model that does not exist: the option is refused before anything loads
    r = cli("grade", passages, "--bank", one_item_bank(tmp_path / "bank.jsonl"), "-p", SELF,
            "--model", tmp_path / "no-model", option, value, "-o", out)  # fmt: skip
    user_error(r, message)
    assert not out.exists()


@pytest.mark.parametrize(("option", "value", "message"), BANK_RANGES, ids=[c[0] for c in BANK_RANGES])
@pytest.mark.parametrize("command", ["generate", "nuggetize", "assign"])
def test_llm_option_ranges(cli, user_error, tmp_path, command, option, value, message):
    passages = passages_file(tmp_path / "p.jsonl.gz", ["bees collect nectar"])
    (tmp_path / "q.json").write_text(json.dumps({"q1": "bees"}))
    args = {
        "generate": ["bank", "generate", "--topics", tmp_path / "q.json"],
        "nuggetize": ["bank", "nuggetize", "--passages", passages, "--topics", tmp_path / "q.json"],
        "assign": ["grade", "assign", passages, "--bank", one_item_bank(tmp_path / "n.jsonl", nugget=True)],
    }[command]
    out = tmp_path / "out.jsonl"
    user_error(
        cli(*args, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", option, value, "-o", out), message
    )
    assert not out.exists()


# --- the response cache: another schema is refused, a damaged value is asked again ---------


def _grade(cli, srv, tmp_path, out):
    passages = passages_file(tmp_path / "p.jsonl.gz", ["bees collect nectar", "ants dig"])
    bank = one_item_bank(tmp_path / "bank.jsonl")
    return cli(
        "grade", passages, "--bank", bank, "-p", SELF, "--backend", "openai", *llm(srv, tmp_path), "-o", out
    )


def test_a_sqlite_file_of_another_schema_is_refused(cli, user_error, tmp_path):
    cache = tmp_path / "cache.sqlite"
    db = sqlite3.connect(cache)
    db.execute("CREATE TABLE responses (id INTEGER, body TEXT)")
    db.commit()
    db.close()
    with serve() as srv:
        r = _grade(cli, srv, tmp_path, tmp_path / "out.jsonl")
        assert not srv.requests
    user_error(r, f"--cache {cache}: a sqlite file of another schema", "id, body", "give another --cache")
    assert not (tmp_path / "out.jsonl").exists()


def test_a_damaged_cached_value_is_asked_again_and_counted(cli, tmp_path):
    with serve() as srv:
        first = _grade(cli, srv, tmp_path, tmp_path / "first.jsonl")
        assert first.returncode == 0, first.stderr
        asked = len(srv.requests)
        assert asked == 2
        db = sqlite3.connect(tmp_path / "cache.sqlite")
        keys = [k for (k,) in db.execute("SELECT key FROM responses ORDER BY key")]
        db.execute("UPDATE responses SET value = '{\"answer\": [1' WHERE key = ?", (keys[0],))
        db.execute("UPDATE responses SET value = '{\"probabilities\": 3}' WHERE key = ?", (keys[1],))
        db.commit()
        db.close()
        again = _grade(cli, srv, tmp_path, tmp_path / "again.jsonl")
        assert again.returncode == 0, again.stderr
        assert len(srv.requests) == asked + 2  # both damaged values asked again
    assert "2 pairs graded, 0 from cache, 2 damaged cache values asked again" in again.stderr, again.stderr
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "first.jsonl").read_bytes()
