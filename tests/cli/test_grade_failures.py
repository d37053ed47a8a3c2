"""`rubric grade` against a local OpenAI-compatible server that fails on purpose: no answer that
arrived is lost, a failure belongs to one pair, runs never mix.

Real CLI subprocesses, real HTTP on 127.0.0.1 (tests/helpers/openai_server.py), real sqlite; requests are
counted at the server.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.cli import cli_env, sigint_as_on_a_terminal
from helpers.openai_server import Fault, serve

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
EXTRACT = "QuestionCompleteConciseUnanswerablePromptWithChoices"
WORDS = "bees honey nectar wax hive queen drone flower pollen comb swarm sting".split()


def write_pool(folder: Path, queries: int = 10, passages: int = 10, items: int = 3, slow: set = frozenset()):
    """``queries`` x ``passages`` passages and ``items`` questions per query; passages whose
    (query, passage) index is in ``slow`` carry the server's ``[slow]`` marker."""
    with gzip.open(folder / "passages.jsonl.gz", "wt") as f:
        for q in range(queries):
            ps = []
            for k in range(passages):
                text = f"passage p{q}x{k} " + " ".join(WORDS[(q + k + j) % len(WORDS)] for j in range(8))
                ps.append({"paragraph_id": f"d{q}x{k}", "text": text + (" [slow]" if (q, k) in slow else "")})
            f.write(json.dumps([f"q{q}", ps]) + "\n")
    with open(folder / "bank.jsonl", "w") as f:
        for q in range(queries):
            its = [
                {
                    "query_id": f"q{q}",
                    "question_id": f"q{q}/i{i}",
                    "question_text": f"Why do {WORDS[i]} item{q}x{i}?",
                }
                for i in range(items)
            ]
            f.write(json.dumps({"query_id": f"q{q}", "query_text": f"query {q}", "items": its}) + "\n")
    return folder / "passages.jsonl.gz", folder / "bank.jsonl"


def lines(path: Path) -> list:
    return [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]


def cached(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def grade_args(srv, passages, bank, cache, *extra) -> list:
    return ["grade", passages, "--bank", bank, "-p", SELF, "--backend", "openai", "--model", "test-model",
            "--base-url", srv.url, "--cache", cache, "--retry-base", "0.01", *extra]  # fmt: skip


def start(args: list, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rubric", *map(str, args), "-o", out],
        env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=sigint_as_on_a_terminal,
    )  # fmt: skip


def wait_for(condition, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_one_prompt_that_always_fails_among_300(cli, tmp_path):
    """A 400 on one (passage, item) prompt of 300: 299 pairs graded and cached, exit 1, the pair
    and its cause listed; the rerun sends exactly one request (the failed prompt)."""
    passages, bank = write_pool(tmp_path)
    out, cache = tmp_path / "graded.jsonl.gz", tmp_path / "cache.sqlite"
    with serve(faults={("item4x1", "passage p4x7 "): Fault(400)}) as srv:
        args = grade_args(srv, passages, bank, cache)
        r = cli(*args, "-o", out)
        assert r.returncode == 1, r.stderr
        assert "300 pairs graded" in r.stderr and "1 failures" in r.stderr
        assert (
            "failed: query q4 passage d4x7 item q4/i1 prompt " + SELF + ": HTTP 400 (scripted failure)"
            in r.stderr
        )
        assert "1 pair failed and is missing" in r.stderr and "Traceback" not in r.stderr
        assert len(srv.requests) == 300 and cached(cache) == 299
        graded = {(q, p["paragraph_id"]): p.get("exam_grades") for q, ps in lines(out) for p in ps}
        assert len(graded) == 100 and [k for k, g in graded.items() if not g] == [("q4", "d4x7")]
        assert (tmp_path / "graded.jsonl.gz.partial").exists()
        r2 = cli(*args, "-o", out)
        assert r2.returncode == 1 and "9 queries resumed" in r2.stderr
        assert len(srv.requests) == 301  # exactly the failed prompt was asked again
        assert "item4x1" in srv.requests[-1]["body"]["messages"][-1]["content"]
    # the server answers it now: the rerun sends that one request and completes the file
    with serve() as srv:
        r3 = cli(*grade_args(srv, passages, bank, cache), "-o", out)
        assert r3.returncode == 0, r3.stderr
        assert len(srv.requests) == 1 and "0 failures" in r3.stderr
    assert all(p.get("exam_grades") for _, ps in lines(out) for p in ps)
    assert not (tmp_path / "graded.jsonl.gz.partial").exists()


def test_a_500_that_outlasts_the_retries_is_listed_with_its_cause(cli, tmp_path):
    passages, bank = write_pool(tmp_path, queries=2, passages=3, items=2)
    with serve(faults={("item1x0", "passage p1x2 "): Fault(503)}) as srv:
        r = cli(
            *grade_args(srv, passages, bank, tmp_path / "c.sqlite", "--max-retries", "2"),
            "-o",
            tmp_path / "o.jsonl.gz",
        )
        assert r.returncode == 1
        assert (
            "failed: query q1 passage d1x2 item q1/i0 prompt" in r.stderr
            and ": HTTP 503 (scripted failure)" in r.stderr
        )
        # the backend's 3 attempts, then the engine's second chance with its own 3
        assert (
            sum(
                "item1x0" in q["body"]["messages"][-1]["content"]
                and "p1x2 " in q["body"]["messages"][-1]["content"]
                for q in srv.requests
            )
            == 6
        )


@pytest.mark.subprocess
def test_kill_9_loses_only_requests_in_flight(cli, tmp_path):
    """Killed while 6 of 40 prompts hang at the server: the other 34 answers are in the cache
    before the kill (each committed as it arrived), and the rerun sends only the 6."""
    slow = {(1, 0), (2, 1), (3, 2)}
    passages, bank = write_pool(tmp_path, queries=4, passages=5, items=2, slow=slow)
    out, cache = tmp_path / "graded.jsonl.gz", tmp_path / "cache.sqlite"
    with serve(slow=60) as srv:
        args = grade_args(srv, passages, bank, cache, "--concurrency", "64")
        proc = start(args, out)
        try:
            assert wait_for(lambda: cached(cache) >= 34), (cached(cache), srv.answered)
            assert srv.in_flight == 6  # the 3 slow passages x 2 items are still waiting
        finally:
            proc.kill()
            proc.wait()
        assert proc.returncode == -signal.SIGKILL and not out.exists()
        assert cached(cache) == srv.answered == 34 and len(srv.requests) == 40
        r = cli(*args, "-o", out)
        assert r.returncode == 0, r.stderr
        assert len(srv.requests) == 46  # only the 6 prompts that were in flight
        assert "40 pairs graded, 34 from cache" in r.stderr
    assert sum(len(ps) for _, ps in lines(out)) == 20


@pytest.mark.subprocess
def test_two_runs_on_one_output_the_second_stops(cli, tmp_path, user_error):
    passages, bank = write_pool(tmp_path, queries=2, passages=2, items=1, slow={(0, 0)})
    out = tmp_path / "graded.jsonl.gz"
    with serve(slow=60) as srv:
        args = grade_args(srv, passages, bank, tmp_path / "c.sqlite")
        first = start(args, out)
        try:
            assert wait_for(lambda: srv.in_flight == 1)
            second = cli(*args, "-o", out)
            user_error(second, f"-o {out}: another `rubric grade` is writing this output", "pid")
            assert first.poll() is None  # the first run goes on undisturbed
        finally:
            first.kill()
            first.wait()
        again = cli(*args, "-o", out)  # a killed run leaves no lock behind
        assert again.returncode == 0, again.stderr


@pytest.mark.subprocess
def test_a_partial_of_other_arguments_is_refused_and_a_damaged_one_resumes(cli, tmp_path, user_error):
    """Killed after 2 of 4 queries (one query per checkpoint); another prompt on the same output is
    refused and nothing is written; a damaged line after those queries is dropped with a warning
    and the rerun ends with the file of an uninterrupted run."""
    passages, bank = write_pool(tmp_path, queries=4, passages=2, items=2, slow={(2, 0)})
    out, partial = tmp_path / "graded.jsonl.gz", tmp_path / "graded.jsonl.gz.partial"
    with serve(slow=60) as srv:
        args = grade_args(srv, passages, bank, tmp_path / "c.sqlite", "--checkpoint-pairs", "1")
        proc = start(args, out)
        try:
            assert wait_for(lambda: partial.exists() and partial.read_text().count("\n") >= 3)
        finally:
            proc.kill()
            proc.wait()
        srv.slow = 0  # the delay only had to hold the killed run; the rerun need not wait for it
        kept = partial.read_bytes()
        other = [a if a != SELF else EXTRACT for a in args]
        user_error(
            cli(*other, "-o", out),
            f"{partial}: left by an interrupted `rubric grade` with other prompts",
            "delete graded.jsonl.gz.partial",
        )
        assert not out.exists() and partial.read_bytes() == kept  # never appended to
        with open(partial, "ab") as f:
            f.write(b'\x00\xff["q9", garbage\n["q8", [')  # a damaged line, then a cut one
        r = cli(*args, "-o", out)
        assert r.returncode == 0, r.stderr
        assert f"{partial}:4: damaged line; resuming from the 2 queries before it" in r.stderr
        assert "2 queries resumed" in r.stderr and not partial.exists()
        clean = tmp_path / "clean.jsonl.gz"
        assert cli(*args, "-o", clean).returncode == 0
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(clean.read_bytes())


def test_a_partial_with_a_damaged_header_is_set_aside(openai_server, cli, tmp_path):
    passages, bank = write_pool(tmp_path, queries=1, passages=1, items=1)
    out = tmp_path / "graded.jsonl.gz"
    (tmp_path / "graded.jsonl.gz.partial").write_bytes(b"\x89PNG\r\n\x1a\nbinary")
    srv = openai_server
    r = cli(*grade_args(srv, passages, bank, tmp_path / "c.sqlite"), "-o", out)
    assert r.returncode == 0, r.stderr
    assert "not a partial file of `rubric grade` (damaged first line); moved to" in r.stderr
    assert (tmp_path / "graded.jsonl.gz.partial.damaged").read_bytes().startswith(b"\x89PNG")


@pytest.mark.subprocess
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_resumes(cli, tmp_path, sig):
    """SIGTERM / Ctrl-C while a prompt hangs: the process ends, the answers are kept, the rerun
    sends only what was in flight."""
    passages, bank = write_pool(tmp_path, queries=2, passages=2, items=1, slow={(1, 1)})
    out, cache = tmp_path / "graded.jsonl.gz", tmp_path / "c.sqlite"
    with serve(slow=60) as srv:
        args = grade_args(srv, passages, bank, cache)
        proc = start(args, out)
        assert wait_for(lambda: cached(cache) == 3)
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr.read()
        r = cli(*args, "-o", out)
        assert r.returncode == 0 and len(srv.requests) == 5
