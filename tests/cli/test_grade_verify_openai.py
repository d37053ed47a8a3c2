"""`rubric grade -p QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2` against a real HTTP server.

The server (tests/openai_server.py) answers the answer-key QA prompt with a span of the passage
and the verification prompt with yes / no by word overlap, so every correctAnswered, every
wrongAnswered and the number of verification requests are recomputed here.
"""

from __future__ import annotations

import gzip
import json
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
server = runpy.run_path(str(HERE.parent / "openai_server.py"))
serve, qa_span, verifies = server["serve"], server["qa_span"], server["verifies"]
root_conftest = runpy.run_path(str(HERE.parent / "conftest.py"))
TINY = HERE.parent / "data" / "tiny"
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


def write_bank(path: Path, slow_query: str | None = None) -> dict[str, dict]:
    """The bank file; returns its items by question id."""
    items: dict[str, dict] = {}
    banks: dict[str, list] = {}
    for n, (qid, text, gold) in enumerate(QUESTIONS):
        if qid == slow_query:
            text += " [slow]"
        item = {"query_id": qid, "question_id": f"{qid}/v{n}", "question_text": text}
        if gold:
            item["gold_answers"] = gold
        items[item["question_id"]] = item
        banks.setdefault(qid, []).append(item)
    with open(path, "w") as f:
        for qid, its in banks.items():
            f.write(json.dumps({"query_id": qid, "query_text": f"query {qid}", "items": its}) + "\n")
    return items


def lines(path: Path) -> list:
    return [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]


def pool(cli, tmp_path: Path) -> Path:
    out = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "-q", TINY / "queries.tsv", "-C", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", TINY / "run.alpha", TINY / "run.beta", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


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


def test_verify_prompt_grades_in_two_stages(cli, tmp_path):
    from rubric.grading.answer_key import check_answer

    passages = pool(cli, tmp_path)
    items = write_bank(tmp_path / "bank.jsonl")
    out, cache = tmp_path / "verified.jsonl.gz", tmp_path / "cache.sqlite"
    with serve() as srv:
        base = ["grade", passages, "--bank", tmp_path / "bank.jsonl", "--backend", "openai",
                "-m", "test-model", "--base-url", srv.url, "--cache", cache]  # fmt: skip
        r = cli(*base, "-p", VERIFY, "-o", out)
        assert r.returncode == 0, r.stderr
        asked_first = verification_requests(srv)
        n_requests = len(srv.requests)
        # again: both stages come from the cache, the file is the same
        again = cli(*base, "-p", VERIFY, "-o", tmp_path / "again.jsonl.gz")
        assert again.returncode == 0, again.stderr
        assert len(srv.requests) == n_requests
        # the plain answer-key prompt extracts with the same prompt: every answer from the cache
        key = cli(*base, "-p", ANSWER_KEY, "-o", tmp_path / "key.jsonl.gz")
        assert key.returncode == 0, key.stderr
        assert len(srv.requests) == n_requests
    graded = lines(out)
    all_asked, n_verified, n_correct, n_wrong = set(), 0, 0, 0
    for qid, ps in graded:
        for p in ps:
            (rec,) = p["exam_grades"]
            answers, correct, wrong, asked = expected(items, qid, p["text"])
            assert rec["answers"] == answers
            assert rec["correctAnswered"] == correct and rec["wrongAnswered"] == wrong
            assert rec["exam_ratio"] == (
                len(correct) / (len(correct) + len(wrong)) if correct or wrong else 0
            )
            assert rec.get("self_ratings") is None and rec["prompt_type"] == "question"
            assert rec["prompt_info"]["prompt_class"] == VERIFY
            assert rec["prompt_info"]["orig_prompt_class"] == ANSWER_KEY
            assert rec["llm"] == "test-model"
            all_asked |= asked
            n_verified += len(asked)
            n_correct += len(correct)
            n_wrong += len(wrong)
    # every case happened: correct via the second gold answer, wrong after asking, unanswerable
    assert n_correct >= 3 and n_wrong >= 3
    assert any(
        i.endswith("/v1") for _, ps in graded for p in ps for i in p["exam_grades"][0]["correctAnswered"]
    )
    assert all(a != "unanswerable" for _, _, a in asked_first)  # never asked about no answer
    assert asked_first == all_asked  # exactly the verification prompts the rule needs, each once
    pairs = sum(len(ps) * sum(1 for it in items.values() if it["query_id"] == q) for q, ps in graded)
    assert f"{pairs} pairs graded, {n_verified} answers verified, 0 from cache" in r.stderr
    assert (
        f"{pairs} pairs graded, {n_verified} answers verified, {pairs + n_verified} from cache"
        in again.stderr
    )
    assert lines(tmp_path / "again.jsonl.gz") == graded
    # the plain answer-key prompt grades the same answers by word matching (EXAM++ 4.2.1)
    for _, ps in lines(tmp_path / "key.jsonl.gz"):
        for p in ps:
            (rec,) = p["exam_grades"]
            right = [i for i, a in rec["answers"] if check_answer(a, items[i].get("gold_answers", []))]
            assert rec["correctAnswered"] == right and rec["prompt_info"]["prompt_class"] == ANSWER_KEY
            assert len(rec["wrongAnswered"]) == len(rec["answers"]) - len(right)
    # the answer-key prompt's answers are the verify prompt's extracted answers
    keyed = {
        (q, p["paragraph_id"]): p["exam_grades"][0]["answers"]
        for q, ps in lines(tmp_path / "key.jsonl.gz")
        for p in ps
    }
    assert keyed == {(q, p["paragraph_id"]): p["exam_grades"][0]["answers"] for q, ps in graded for p in ps}


def test_verify_prompt_kill_9_then_rerun_gives_the_uninterrupted_file(cli, tmp_path):
    """Killed while q3's prompts wait on the server ([slow]), then rerun: the same file as a clean run."""
    passages = pool(cli, tmp_path)
    write_bank(tmp_path / "bank.jsonl", slow_query="q3")
    out = tmp_path / "out.jsonl.gz"
    partial = tmp_path / "out.jsonl.gz.partial"
    # q3's first attempts take 4 s: the kill lands while q3 waits; the rerun pays 4 s once more
    # for q3's verification prompts (their question text carries the marker too)
    with serve(slow=4) as srv:
        args = ["grade", passages, "--bank", tmp_path / "bank.jsonl", "-p", VERIFY, "--backend",
                "openai", "-m", "test-model", "--base-url", srv.url, "--no-cache",
                "--checkpoint-pairs", "1"]  # fmt: skip
        proc = subprocess.Popen(
            [sys.executable, "-m", "rubric", *map(str, args), "-o", out],
            env=root_conftest["cli_env"](), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if partial.exists() and partial.read_text().count("\n") >= 3:  # header + q1 + q2
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL  # killed while q3 waited
        assert not out.exists() and partial.read_text().count("\n") == 3
        r = cli(*args, "-o", out)  # the server answers q3 at once now (only first attempts are slow)
        assert r.returncode == 0, r.stderr
        assert "2 queries resumed" in r.stderr
        clean = tmp_path / "clean.jsonl.gz"
        r = cli(*args, "-o", clean)
        assert r.returncode == 0, r.stderr
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(clean.read_bytes())
    assert not partial.exists()
