"""`rubric bank` end to end: the real CLI against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from helpers.openai_server import Fault, serve
from rubric.data.jsonl import read_bank

KEY = "sk-never-written-4711"


def md5(text: str) -> str:
    return hashlib.md5(text.strip().encode()).hexdigest()


def llm_args(url, tmp_path, *extra):
    return (
        "--model",
        "test-model",
        "--base-url",
        url,
        "--retry-base",
        "0.01",
        "--cache",
        tmp_path / "cache.sqlite",
        *extra,
    )


def test_generate_with_30_percent_failures_loses_nothing(cli, tmp_path):
    queries = {f"q{i}": f"topic number {i}" for i in range(12)}
    queries.update(
        {"qf": "bees [fenced]", "qn": "honey [numbered]", "qp": "hives [prose]", "qm": "wax [malformed]"}
    )
    (tmp_path / "q.json").write_text(json.dumps(queries))
    (tmp_path / "key").write_text(KEY)
    out = tmp_path / "bank.jsonl.gz"
    with serve(fail_rate=0.3, seed=7, api_key=KEY) as srv:
        args = (
            "bank",
            "generate",
            "--topics",
            tmp_path / "q.json",
            "--kind",
            "questions",
            "--items-per-query",
            "5",
            "-o",
            out,
        )
        r = cli(*args, *llm_args(srv.url, tmp_path, "--api-key-file", tmp_path / "key", "--max-retries", "8"))
        assert r.returncode == 0, r.stderr
        assert srv.failures_sent >= 3  # the failures really happened
        assert f"{srv.failures_sent} retries, 0 failed" in r.stderr
        assert f"wrote {len(queries)} of {len(queries)} banks (80 questions)" in r.stderr
        banks = {b.query_id: b for b in read_bank(out)}
        assert set(banks) == set(queries)
        for qid, bank in banks.items():
            assert len(bank.items) == 5
            for item in bank.items:
                assert item.question_id == f"{qid}/{md5(item.question_text)}"
        assert banks["qm"].info["attempts"] == 2  # malformed JSON was re-asked once
        assert banks["q1"].items[0].question_text == "Question 1 on topic number 1?"
        assert (
            banks["q1"].info["llm"] == "test-model"
            and banks["q1"].info["prompt_class"] == "GenerateQuestionsDL"
        )
        for f in (out, tmp_path / "cache.sqlite"):
            assert KEY.encode() not in f.read_bytes()
        assert KEY not in r.stderr + r.stdout
        # a second run is answered from the cache: no request reaches the server
        before = len(srv.requests)
        again = cli(*args, *llm_args(srv.url, tmp_path, "--api-key-file", tmp_path / "key"))
        assert again.returncode == 0 and len(srv.requests) == before
        assert "17 prompts, 17 from cache" in again.stderr  # 16 queries + 1 re-ask of the malformed one


def test_generate_car_style_uses_facets(cli, tmp_path):
    (tmp_path / "q.json").write_text(json.dumps({"tqa2:L_1": "Geology"}))
    (tmp_path / "facets.tsv").write_text("tqa2:L_1\tT_1\tPlate tectonics\ntqa2:L_1\tT_2\tErosion\n")
    out = tmp_path / "car.jsonl"
    with serve() as srv:
        r = cli(
            "bank", "generate", "--topics", tmp_path / "q.json", "--kind", "nuggets", "--style", "car",
            "--facets", tmp_path / "facets.tsv", "-o", out, *llm_args(srv.url, tmp_path),
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert "Explore the connection between 'Geology'" in srv.requests[0]["body"]["messages"][0]["content"]
    banks = list(read_bank(out))
    assert [(b.facet_id, b.query_text) for b in banks] == [
        ("T_1", "Geology / Plate tectonics"),
        ("T_2", "Geology / Erosion"),
    ]
    item = banks[1].items[0]
    assert item.nugget_text == "Nugget 1 on Erosion"
    assert item.nugget_id == f"tqa2:L_1/T_2/{md5('Nugget 1 on Erosion')}" and item.facet_id == "T_2"


def test_generate_reports_queries_that_stay_unreadable(openai_server, cli, tmp_path):
    (tmp_path / "q.json").write_text(json.dumps({"a": "fine", "b": "broken [malformed]"}))
    out = tmp_path / "bank.jsonl"
    srv = openai_server
    r = cli(
        "bank",
        "generate",
        "--topics",
        tmp_path / "q.json",
        "--parse-retries",
        "0",
        "-o",
        out,
        *llm_args(srv.url, tmp_path),
    )
    assert r.returncode == 1
    assert "failed: b: unreadable answer after 1 attempt(s)" in r.stderr
    assert "1 query failed and is missing" in r.stderr
    assert [b.query_id for b in read_bank(out)] == ["a"]


def test_generate_bad_options_are_user_errors(cli, tmp_path, user_error):
    (tmp_path / "q.json").write_text(json.dumps({"a": "x"}))
    base = ("bank", "generate", "--topics", tmp_path / "q.json", "--model", "m", "-o", tmp_path / "o.jsonl")
    user_error(cli(*base, "--kind", "answers"), "--kind")
    user_error(cli(*base, "--style", "car"), "--facets")
    user_error(cli(*base, "--api-key-file", tmp_path / "no-key"), "--api-key-file")
    user_error(
        cli(
            "bank", "generate", "--topics", tmp_path / "none.json", "--model", "m", "-o", tmp_path / "o.jsonl"
        ),
        "none.json",
    )
    assert not (tmp_path / "o.jsonl").exists()


def test_import_show_edit_diff(cli, tmp_path, user_error):
    (tmp_path / "q.json").write_text(json.dumps({"q1": "how do bees make honey", "q2": "what is wax"}))
    (tmp_path / "n.tsv").write_text(
        "q1\tBees gather nectar\tvital\nq1\tHoney is stored in combs\tokay\nq2\tWax is secreted\n"
    )
    bank = tmp_path / "bank.jsonl.gz"
    r = cli(
        "bank", "import", tmp_path / "n.tsv", "--kind", "nuggets", "--topics", tmp_path / "q.json", "-o", bank
    )
    assert r.returncode == 0, r.stderr
    banks = {b.query_id: b for b in read_bank(bank)}
    assert [(i.nugget_id, i.importance) for i in banks["q1"].items] == [
        (f"q1/{md5('Bees gather nectar')}", "vital"),
        (f"q1/{md5('Honey is stored in combs')}", "okay"),
    ]
    shown = cli("bank", "show", bank, "--query", "q1")
    assert shown.returncode == 0
    assert shown.stdout.splitlines() == [
        "# q1: how do bees make honey  [2 nuggets]",
        f"q1/{md5('Bees gather nectar')} [vital]\tBees gather nectar",
        f"q1/{md5('Honey is stored in combs')} [okay]\tHoney is stored in combs",
    ]
    old = f"q1/{md5('Bees gather nectar')}"
    edited = tmp_path / "edited.jsonl.gz"
    r = cli(
        "bank", "edit", bank, "--rewrite", f"{old}=Bees gather flower nectar",
        "--remove", f"q2/{md5('Wax is secreted')}", "--add", "q2=Wax comes from glands", "-o", edited,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "1 added, 1 removed, 1 rewritten" in r.stderr
    new = {b.query_id: b for b in read_bank(edited)}
    rewritten = new["q1"].items[0]
    assert rewritten.nugget_id == f"q1/{md5('Bees gather flower nectar')}"
    assert rewritten.info == {"previous_id": old} and rewritten.importance == "vital"
    d = cli("bank", "diff", bank, edited)
    assert d.returncode == 0
    assert d.stdout.splitlines() == [
        "# q1",
        f"~ {old} -> {rewritten.nugget_id}\tBees gather nectar -> Bees gather flower nectar",
        "# q2",
        f"- q2/{md5('Wax is secreted')}\tWax is secreted",
        f"+ q2/{md5('Wax comes from glands')}\tWax comes from glands",
    ]
    user_error(cli("bank", "edit", bank, "--remove", "q1/nope"), "--remove q1/nope")
    user_error(cli("bank", "show", bank, "--query", "q9"), "--query q9")
    (tmp_path / "bad.tsv").write_text("q1\tfine\nq1 no tab here\n")
    user_error(cli("bank", "import", tmp_path / "bad.tsv", "-o", tmp_path / "x.jsonl"), "bad.tsv:2:")
    assert not (tmp_path / "x.jsonl").exists()


def test_import_tqa_questions_with_answer_keys(cli, tmp_path):
    lesson = {
        "globalID": "L_0002",
        "lessonName": "earth science and its branches",
        "questions": {
            "nonDiagramQuestions": {
                "NDQ_000001": {
                    "beingAsked": {"processedText": "What is the study of rocks called?"},
                    "correctAnswer": {"processedText": "b"},
                    "answerChoices": {"a": {"processedText": "biology"}, "b": {"processedText": "geology"}},
                },
                "NDQ_000002": {
                    "beingAsked": {"processedText": "Rocks never change."},
                    "correctAnswer": {"processedText": "false"},
                    "answerChoices": {"a": {"processedText": "true"}, "b": {"processedText": "false"}},
                },
            }
        },
    }
    (tmp_path / "tqa.json").write_text(json.dumps([lesson]))
    out = tmp_path / "tqa.jsonl"
    r = cli("bank", "import", tmp_path / "tqa.json", "--format", "tqa", "-o", out)
    assert r.returncode == 0, r.stderr
    (bank,) = read_bank(out)
    assert bank.query_id == "tqa2:L_0002" and bank.query_text == "earth science and its branches"
    assert [(i.question_text, i.gold_answers) for i in bank.items] == [
        ("What is the study of rocks called?", ["geology"]),
        ("Rocks never change.", ["false"]),
    ]


@pytest.mark.subprocess
def test_killed_generate_resumes_without_asking_again(cli, tmp_path):
    """Kill `rubric bank generate` while half its prompts hang: answered prompts are in the cache,
    no output file exists, and the re-run asks the server only the unanswered half."""
    import os
    import subprocess
    import sys
    import time

    from rubric.llm.cache import ResponseCache

    queries = {f"fast{i}": f"fast topic {i}" for i in range(4)} | {
        f"slow{i}": f"[slow] topic {i}" for i in range(4)
    }
    (tmp_path / "q.json").write_text(json.dumps(queries))
    out, cache = tmp_path / "bank.jsonl", tmp_path / "cache.sqlite"
    src = str(Path(__file__).parents[2] / "src")
    with serve(slow=60) as srv:
        args = ["bank", "generate", "--topics", tmp_path / "q.json", "-o", out, *llm_args(srv.url, tmp_path)]
        env = dict(os.environ, PYTHONPATH=src)
        proc = subprocess.Popen(
            [sys.executable, "-m", "rubric", *map(str, args)], env=env, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (
                len(srv.requests) == 8 and cache.exists() and len(ResponseCache(cache)) == 4
            ):
                time.sleep(0.1)
            assert len(srv.requests) == 8
        finally:
            proc.kill()
            proc.wait()
        assert "Traceback (most recent call last)" not in proc.stderr.read().decode()
        assert not out.exists()
        r = cli(*args)
        assert r.returncode == 0, r.stderr
        assert "8 prompts, 4 from cache, 0 retries, 0 failed" in r.stderr
        assert len(srv.requests) == 12  # only the 4 unanswered prompts were asked again
    assert {b.query_id for b in read_bank(out)} == set(queries)


def test_generate_one_failing_query_fails_alone_and_the_rerun_asks_only_it(cli, tmp_path):
    """A query whose prompt the server always refuses (HTTP 400) among 20: 19 banks written and
    cached, exit 1 with the query and the cause listed; the rerun sends exactly that one request."""
    from rubric.llm.cache import ResponseCache

    fault = Fault
    queries = {f"q{i}": f"topic number {i}" for i in range(19)} | {"bad": "topic POISON"}
    (tmp_path / "q.json").write_text(json.dumps(queries))
    out = tmp_path / "bank.jsonl"
    args = ("bank", "generate", "--topics", tmp_path / "q.json", "-o", out)
    with serve(faults={"POISON": fault(400)}) as srv:
        r = cli(*args, *llm_args(srv.url, tmp_path))
        assert r.returncode == 1
        assert "failed: bad: no answer from the LLM (HTTP 400 (scripted failure))" in r.stderr
        assert "wrote 19 of 20 banks" in r.stderr and "1 query failed and is missing" in r.stderr
        assert len(srv.requests) == 20 and len(ResponseCache(tmp_path / "cache.sqlite")) == 19
        again = cli(*args, *llm_args(srv.url, tmp_path))
        assert again.returncode == 1 and len(srv.requests) == 21
        assert "POISON" in srv.requests[-1]["body"]["messages"][0]["content"]
    with serve() as srv:
        fixed = cli(*args, *llm_args(srv.url, tmp_path))
        assert fixed.returncode == 0 and len(srv.requests) == 1
    assert {b.query_id for b in read_bank(out)} == set(queries)
