"""`rubric grade -p QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2` against a real HTTP server.

The server (tests/helpers/openai_server.py) answers the answer-key QA prompt with a span of the passage
and the verification prompt with yes / no by word overlap, so every correctAnswered, every
wrongAnswered and the number of verification requests are recomputed here.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import TINY
from helpers.cli import assert_no_traceback, cli_env
from helpers.openai_server import qa_span, serve, verifies

VERIFY = "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2"
ANSWER_KEY = "QuestionCompleteConcisePromptWithAnswerKey2"
UNANSWERABLE = {"unanswerable"}

# (query, question, gold answers): one gold, two golds (the second one verifies), none, and
# answers the server cannot find (unanswerable: wrong without asking the verifier)
QUESTIONS = [
    ("q1", "Where do bees store nectar?", ["in their honey stomach"]),
    ("q1", "What do bees collect?", ["wax", "nectar"]),
    ("q1", "Why does honey keep for years?", []),
    ("q2", "What scatters light?", ["molecules of the air"]),
    ("q3", "What pulls the oceans?", ["gravity of the moon", "the moon"]),
]


def write_bank(path: Path, questions: list = QUESTIONS) -> dict[str, dict]:
    """The bank file; returns its items by question id."""
    items: dict[str, dict] = {}
    banks: dict[str, list] = {}
    for n, (qid, text, gold) in enumerate(questions):
        item = {"query_id": qid, "question_id": f"{qid}/v{n}", "question_text": text}
        if gold:
            item["gold_answers"] = gold
        items[item["question_id"]] = item
        banks.setdefault(qid, []).append(item)
    with open(path, "w") as f:
        for qid, its in banks.items():
            f.write(json.dumps({"query_id": qid, "query_text": f"query {qid}", "items": its}) + "\n")
    return items


def write_passages(path: Path) -> None:
    """The tiny pool (alpha's ranking); q3's passages carry the server's ``[slow]`` marker, so only
    the extraction prompts of q3 (which hold the passage) wait on their first attempt."""
    texts = dict(line.split("\t") for line in (TINY / "collection.tsv").read_text().splitlines())
    ranked: dict[str, list] = {}
    for line in (TINY / "run.alpha").read_text().splitlines():
        qid, _, doc, *_ = line.split()
        text = texts[doc] + (" [slow]" if qid == "q3" else "")
        ranked.setdefault(qid, []).append({"paragraph_id": doc, "text": text})
    with gzip.open(path, "wt") as f:
        for qid, ps in ranked.items():
            f.write(json.dumps([qid, ps]) + "\n")


def lines(path: Path) -> list:
    return [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]


def expected(items: dict[str, dict], qid: str, text: str) -> tuple[list, list, list, set]:
    """answers, correctAnswered, wrongAnswered and the verification prompts for one passage."""
    answers, correct, wrong, asked = [], [], [], set()
    for item_id, it in items.items():
        if it["query_id"] != qid:
            continue
        answer = qa_span(it["question_text"], text)
        answers.append([item_id, answer])
        gold = it.get("gold_answers", [])
        if not gold:
            continue  # not verifiable: in neither list
        if answer in UNANSWERABLE:
            wrong.append(item_id)
            continue
        asked |= {(it["question_text"], g, answer) for g in gold}
        (correct if any(verifies(answer, g) for g in gold) else wrong).append(item_id)
    return answers, correct, wrong, asked


def verification_requests(srv) -> set:
    out = set()
    for req in srv.requests:
        user = req["body"]["messages"][-1]["content"]
        if user.startswith("For the question"):
            q, rest = user[len('For the question "') :].split('" the correct answer is "', 1)
            g, rest = rest.split('". Is "', 1)
            out.add((q, g, rest.split('" an equally correct response')[0]))
    return out


@pytest.mark.slow
@pytest.mark.subprocess
def test_verify_prompt_grades_in_two_stages_and_resumes(cli, tmp_path):
    """Killed (kill -9) while q3's extraction waits on the server, then rerun; then rerun again
    (everything from the cache) and grade with the plain answer-key prompt (extraction cached)."""
    from rubric.prompting.answer_key import check_answer

    passages, bank, partial = (
        tmp_path / "passages.jsonl.gz",
        tmp_path / "bank.jsonl",
        tmp_path / "out.jsonl.gz.partial",
    )
    write_passages(passages)
    items = write_bank(bank)
    out, cache = tmp_path / "out.jsonl.gz", tmp_path / "cache.sqlite"
    with serve(slow=10) as srv:
        base = ["grade", passages, "--bank", bank, "--backend", "openai", "--model", "test-model",
                "--base-url", srv.url, "--cache", cache]  # fmt: skip
        args = [*base, "-p", VERIFY, "--checkpoint-pairs", "1"]  # one query per checkpoint
        stderr = tmp_path / "stderr.txt"
        proc = subprocess.Popen(
            [sys.executable, "-m", "rubric", *map(str, args), "-o", out],
            env=cli_env(), stdout=subprocess.DEVNULL, stderr=stderr.open("w"),
        )  # fmt: skip
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if partial.exists() and partial.read_text().count("\n") >= 3:  # header + q1 + q2
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL  # killed while q3 waited
        assert_no_traceback(stderr.read_text(), args)
        assert not out.exists() and partial.read_text().count("\n") == 3
        srv.slow = 0  # the delay only had to hold the killed run; the rerun need not wait for it
        r = cli(*args, "-o", out)
        assert r.returncode == 0, r.stderr
        assert "2 queries resumed" in r.stderr and not partial.exists()
        asked = verification_requests(srv)
        n_requests = len(srv.requests)
        # an uninterrupted run (both stages from the cache) writes the same file
        again = cli(*args, "-o", tmp_path / "again.jsonl.gz")
        assert again.returncode == 0, again.stderr
        assert len(srv.requests) == n_requests
        assert gzip.decompress(out.read_bytes()) == gzip.decompress(
            (tmp_path / "again.jsonl.gz").read_bytes()
        )
        # the plain answer-key prompt extracts with the same prompt: every answer from the cache
        key = cli(*base, "-p", ANSWER_KEY, "-o", tmp_path / "key.jsonl.gz")
        assert key.returncode == 0, key.stderr
        assert len(srv.requests) == n_requests
    graded = lines(out)
    all_asked, n_verified, n_correct, n_wrong = set(), 0, 0, 0
    for qid, ps in graded:
        for p in ps:
            (rec,) = p["exam_grades"]
            answers, correct, wrong, need = expected(items, qid, p["text"])
            assert rec["answers"] == answers
            assert rec["correctAnswered"] == correct and rec["wrongAnswered"] == wrong
            assert rec["exam_ratio"] == (
                len(correct) / (len(correct) + len(wrong)) if correct or wrong else 0
            )
            assert rec.get("self_ratings") is None and rec["prompt_type"] == "question"
            assert rec["prompt_info"]["prompt_class"] == VERIFY
            assert rec["prompt_info"]["orig_prompt_class"] == ANSWER_KEY
            assert rec["llm"] == "test-model"
            all_asked |= need
            n_verified += len(need)
            n_correct += len(correct)
            n_wrong += len(wrong)
    # every case happened: correct (also via a second gold answer), wrong after asking, unanswerable
    assert n_correct >= 3 and n_wrong >= 3
    assert any(
        i.endswith("/v1") for _, ps in graded for p in ps for i in p["exam_grades"][0]["correctAnswered"]
    )
    assert any(a == "unanswerable" for _, ps in graded for p in ps for _, a in p["exam_grades"][0]["answers"])
    assert all(a != "unanswerable" for _, _, a in asked)  # never asked about no answer
    assert asked == all_asked  # exactly the verification prompts the rule needs
    pairs = sum(len(ps) * sum(1 for it in items.values() if it["query_id"] == q) for q, ps in graded)
    assert (
        f"{pairs} pairs graded, {n_verified} answers verified, {pairs + n_verified} from cache"
        in again.stderr
    )
    # the plain answer-key prompt grades the same answers by word matching (EXAM++ 4.2.1)
    keyed = lines(tmp_path / "key.jsonl.gz")
    for _, ps in keyed:
        for p in ps:
            (rec,) = p["exam_grades"]
            right = [i for i, a in rec["answers"] if check_answer(a, items[i].get("gold_answers", []))]
            assert rec["correctAnswered"] == right and rec["prompt_info"]["prompt_class"] == ANSWER_KEY
            assert len(rec["wrongAnswered"]) == len(rec["answers"]) - len(right)
    assert [[p["exam_grades"][0]["answers"] for p in ps] for _, ps in keyed] == [
        [p["exam_grades"][0]["answers"] for p in ps] for _, ps in graded
    ]


def test_failed_verifications_are_retried_by_the_grader(cli, tmp_path):
    """A gold answer with the server's ``[500]`` marker fails its verification prompts' first
    attempt; with --max-retries 0 the client gives up, the grader asks again and grades them."""
    write_passages(tmp_path / "passages.jsonl.gz")
    questions = [(q, t, [g + " [500]" for g in gold]) for q, t, gold in QUESTIONS]
    items = write_bank(tmp_path / "bank.jsonl", questions)
    out = tmp_path / "out.jsonl.gz"
    with serve() as srv:
        r = cli("grade", tmp_path / "passages.jsonl.gz", "--bank", tmp_path / "bank.jsonl", "-p", VERIFY,
                "--backend", "openai", "--model", "test-model", "--base-url", srv.url, "--max-retries", "0",
                "--no-cache", "-o", out)  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert "0 failures" in r.stderr
        failed = [
            q for q in srv.requests if q["attempt"] == 0 and "[500]" in q["body"]["messages"][-1]["content"]
        ]
        assert failed and all(
            q["body"]["messages"][-1]["content"].startswith("For the question") for q in failed
        )
    for qid, ps in lines(out):
        for p in ps:
            _, correct, wrong, _ = expected(items, qid, p["text"])
            rec = p["exam_grades"][0]
            assert (rec["correctAnswered"], rec["wrongAnswered"]) == (correct, wrong)
