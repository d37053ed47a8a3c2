"""`rubric grade` end to end through the CLI, with tiny random models built offline."""

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

from helpers import BANKS, TINY, tiny_models
from helpers import cli as root_conftest

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
EXTRACT = "QuestionCompleteConciseUnanswerablePromptWithChoices"


@pytest.fixture(scope="module")
def models(tiny_models_dirs):
    return tiny_models_dirs


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """The tiny pool: 3 queries, passages of both runs plus judged ones."""
    tiny = TINY
    out = tmp_path_factory.mktemp("pool") / "passages.jsonl.gz"
    r = root_conftest.run_cli(
        "convert", "runs", "--topics", tiny / "queries.tsv", "--collection", tiny / "collection.tsv",
        "--qrels", tiny / "qrels.txt", tiny / "run.alpha", tiny / "run.beta", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def lines(path: Path) -> list:
    return [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]


@pytest.fixture(scope="module")
def whole(tmp_path_factory, models, pool):
    """One graded file (two question prompts) and the arguments that made it."""
    folder = tmp_path_factory.mktemp("whole")
    args = [pool, "--bank", BANKS / "questions.jsonl", "-p", SELF, "-p", EXTRACT, "--model", models["t5"]]
    args += ["--max-new-tokens", "4", "--cache", folder / "c.sqlite"]
    r = root_conftest.run_cli("grade", *args, "-o", folder / "graded.jsonl.gz")
    assert r.returncode == 0, r.stderr
    return folder / "graded.jsonl.gz", r.stderr, args


def test_exam_default_command(whole):
    out, stderr, _ = whole
    assert "0 from cache" in stderr and "0 failures" in stderr
    graded = lines(out)
    assert [q for q, _ in graded] == ["q1", "q2", "q3"]
    classes = {g["prompt_info"]["prompt_class"] for _, ps in graded for p in ps for g in p["exam_grades"]}
    assert classes == {SELF, EXTRACT}
    pairs = int(stderr.split(" pairs graded")[0].split()[-1])
    assert pairs == 2 * sum(len(ps) * {"q1": 3, "q2": 2, "q3": 1}[q] for q, ps in graded)


def test_nuggets_with_a_chat_model_and_direct_prompts(cli, tmp_path, models, pool):
    nug = tmp_path / "nuggets.jsonl.gz"
    r = cli(
        "grade", pool, "--bank", BANKS / "nuggets.jsonl", "-p", "NuggetSelfRatedPrompt",
        "-p", "NuggetExtractionPrompt", "--backend", "hf-causal", "--model", models["gpt2"],
        "--max-new-tokens", "3", "--no-cache", "-o", nug,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rec = lines(nug)[0][1][0]["exam_grades"][0]
    assert rec["prompt_type"] == "nugget" and "nugget_id" in rec["self_ratings"][0]
    assert rec["llm_options"]["chat_template"] is True
    direct = tmp_path / "direct.jsonl.gz"
    tiny = TINY
    r = cli(
        "grade", "direct", nug, "--topics", tiny / "queries.tsv", "-p", "Sun", "-p", "Thomas",
        "--backend", "hf-causal", "--model", models["gpt2"], "--max-new-tokens", "3", "--no-cache",
        "-o", direct,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    p = lines(direct)[0][1][0]
    assert len(p["exam_grades"]) == 2  # grading again with other prompts adds to the file
    assert [g["prompt_info"]["prompt_class"] for g in p["grades"]] == ["Sun", "Thomas"]
    assert p["grades"][0]["prompt_type"] == "direct_grading"


def test_extractive_qa_backend(cli, tmp_path, models, pool):
    out = tmp_path / "qa.jsonl.gz"
    r = cli(
        "grade", pool, "--bank", BANKS / "questions.jsonl", "-p", EXTRACT, "--backend", "hf-qa",
        "--model", models["qa"], "--no-cache", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    for _, ps in lines(out):
        for p in ps:
            assert all(a == "" or a in p["text"] for _, a in p["exam_grades"][0]["answers"])


def test_shards_merge_into_the_unsharded_file(cli, tmp_path, whole, pool):
    out, _, args = whole
    parts = []
    for i in (1, 2):
        part = tmp_path / f"part{i}.jsonl.gz"
        # the explicit subcommand name works too; the shared cache answers every pair (100% hits)
        r = cli("grade", "exam", *args, "--shard", f"{i}/2", "-o", part)
        assert r.returncode == 0, r.stderr
        pairs = int(r.stderr.split(" pairs graded")[0].split()[-1])
        assert pairs > 0 and f"{pairs} pairs graded, {pairs} from cache" in r.stderr
        parts.append(part)
    assert sorted(q for p in parts for q, _ in lines(p)) == ["q1", "q2", "q3"]
    assert all(lines(p) for p in parts)  # both shards got queries
    merged = tmp_path / "merged.jsonl.gz"
    r = cli("grade", "merge", *parts, "--order", pool, "-o", merged)
    assert r.returncode == 0, r.stderr
    assert gzip.decompress(merged.read_bytes()) == gzip.decompress(out.read_bytes())
    dup = cli("grade", "merge", parts[0], parts[0], "-o", tmp_path / "dup.jsonl.gz")
    assert dup.returncode == 2 and "overlapping parts" in dup.stderr
    assert not (tmp_path / "dup.jsonl.gz").exists()


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("backend", ["hf-seq2seq", "ct2-seq2seq"])
def test_kill_9_then_rerun_gives_the_uninterrupted_file(cli, tmp_path, models, backend, private_models):
    if backend.startswith("ct2"):
        pytest.importorskip("ctranslate2")
    passages, bank = tiny_models.big_pool(tmp_path)
    args = ["grade", passages, "--bank", bank, "-p", SELF, "--model", models["t5"], "--no-fast", "--no-cache"]
    args += ["--max-new-tokens", "12", "--checkpoint-pairs", "16", "--backend", backend]
    clean = tmp_path / "clean.jsonl.gz"
    assert cli(*args, "-o", clean).returncode == 0
    out = tmp_path / "out.jsonl.gz"
    partial = tmp_path / "out.jsonl.gz.partial"
    stderr = tmp_path / "stderr.txt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubric", *map(str, args), "-o", out],
        env=root_conftest.cli_env(), stdout=subprocess.DEVNULL, stderr=stderr.open("w"),
    )  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if partial.exists() and partial.read_text().count("\n") >= 4:  # header + 3 finished queries
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # it really was killed mid-run
    root_conftest.assert_no_traceback(stderr.read_text(), args)
    assert not out.exists()
    done_before = partial.read_text().count("\n") - 1
    assert 3 <= done_before < 40
    r = cli(*args, "-o", out)
    assert r.returncode == 0, r.stderr
    assert f"{done_before} queries resumed" in r.stderr or "queries resumed" in r.stderr
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(clean.read_bytes())
    assert not partial.exists()


def test_user_errors(cli, user_error, tmp_path, models, pool):
    bank = BANKS / "questions.jsonl"
    out = tmp_path / "x.jsonl.gz"
    user_error(
        cli("grade", pool, "--bank", bank, "-p", "NoSuchPrompt", "-o", out), "--prompt: unknown prompt"
    )
    user_error(cli("grade", pool, "--bank", bank, "-p", SELF, "--backend", "nope", "-o", out), "--backend")
    user_error(cli("grade", pool, "--bank", bank, "-p", SELF, "--shard", "3/2", "-o", out), "--shard")
    user_error(
        cli("grade", pool, "--bank", bank, "-p", "NuggetSelfRatedPrompt", "--model", models["t5"], "-o", out),
        "--prompt NuggetSelfRatedPrompt: grades nugget items, but the bank holds question items",
    )
    user_error(
        cli("grade", pool, "--bank", bank, "-p", "Sun", "--model", models["t5"], "-o", out),
        "rubric grade direct",
    )
    user_error(
        cli("grade", tmp_path / "missing.jsonl", "--bank", bank, "-p", SELF, "-o", out), "missing.jsonl"
    )
    # a model made for another backend says which one; backends without a default need --model
    user_error(
        cli("grade", pool, "--bank", bank, "-p", SELF, "--model", models["qa"], "-o", out),
        f"--model {models['qa']}: a model for --backend hf-qa, not hf-seq2seq; add --backend hf-qa",
    )
    user_error(
        cli(
            "grade",
            pool,
            "--bank",
            bank,
            "-p",
            SELF,
            "--backend",
            "hf-causal",
            "--model",
            models["t5"],
            "-o",
            out,
        ),
        "not hf-causal; add --backend hf-seq2seq",
    )
    user_error(
        cli("grade", pool, "--bank", bank, "-p", SELF, "--model", "minilm-l6", "-o", out),
        "--model minilm-l6: a model for --backend embedding",
    )
    user_error(cli("grade", pool, "--bank", bank, "-p", SELF, "--backend", "hf-causal", "-o", out),
               "--model: required with --backend hf-causal")  # fmt: skip
    assert not out.exists()


def test_help_lists_subcommands_and_defaults(cli):
    r = cli("grade", "--help")
    assert r.returncode == 0
    for name in ("exam", "direct", "merge"):
        assert name in r.stdout
    r = cli("grade", "exam", "--help")
    for opt in ("--bank", "--backend", "--device", "--dtype", "--batch-size", "--token-budget", "--cache"):
        assert opt in r.stdout
    from rubric.llm.registry import BACKENDS

    listed = "".join(r.stdout.split())  # help wraps lines at hyphens: compare without blanks
    assert all(f"{name}(" in listed for name in BACKENDS), listed  # every registered backend
    assert "Example:" in r.stdout and "Default: 512" in r.stdout


def test_query_subset_stdin_and_stdout(whole, tmp_path):
    """`--query` grades only those queries (the output holds them); the passages file may come
    on stdin and the graded file go to stdout; a missing selected query is named on stderr."""
    out, _, args = whole
    pool, rest = args[0], [str(a) for a in args[1:]]
    sub = tmp_path / "sub.jsonl.gz"
    r = root_conftest.run_cli("grade", pool, *rest, "--query", "q2", "--query", "q9", "-o", sub)
    assert r.returncode == 0, r.stderr
    assert "query q9 is not in" in r.stderr
    graded = {q: ps for q, ps in lines(out)}
    assert lines(sub) == [["q2", graded["q2"]]]  # equal to the whole run's q2, answered from the cache

    piped = root_conftest.run_cli(
        "grade", "-", *rest, "--query", "q2", "-o", "-", input=gzip.decompress(pool.read_bytes()), text=False
    )
    assert piped.returncode == 0, piped.stderr.decode()
    assert [json.loads(x) for x in piped.stdout.decode().splitlines()] == [["q2", graded["q2"]]]
    assert not list(Path.cwd().glob("-*")), "no file named '-' or '-.partial' was written"

    none = root_conftest.run_cli("grade", pool, *rest, "--query", "q9", "-o", tmp_path / "none.jsonl.gz")
    root_conftest.assert_user_error(none, "none of the selected queries is in")
    assert not (tmp_path / "none.jsonl.gz").exists()


def _expected(graded: list) -> list[float]:
    """Every ``expected_rating`` of a graded file, in file order."""
    return [
        r["expected_rating"]
        for _, passages in graded
        for p in passages
        for g in p.get("exam_grades", [])
        for r in g.get("self_ratings", [])
        if "expected_rating" in r
    ]


def _without_expected(graded: list) -> list:
    """The graded file with every ``expected_rating`` taken out (compared apart, to a tolerance)."""
    out = json.loads(json.dumps(graded))
    for _, passages in out:
        for p in passages:
            for g in p.get("exam_grades", []):
                for r in g.get("self_ratings", []):
                    r.pop("expected_rating", None)
    return out


def test_attention_options(whole, tmp_path):
    """--attention eager / sdpa grade alike; the summary names the path; openai refuses them."""
    _, _, args = whole
    got = {}
    for attention in ("eager", "sdpa"):
        o = tmp_path / f"{attention}.jsonl.gz"
        r = root_conftest.run_cli(
            "grade", *args[:-2], "--no-cache", "--attention", attention, "--query", "q1", "-o", o
        )
        assert r.returncode == 0, r.stderr
        assert f"attention {attention}" in r.stderr
        got[attention] = lines(o)
    # The grades are equal; `expected_rating` is a probability-weighted mean rounded to 4 places,
    # and the two kernels' float sums may differ in the last bit, enough to round it the other way.
    assert _without_expected(got["eager"]) == _without_expected(got["sdpa"])
    assert _expected(got["eager"]) == pytest.approx(_expected(got["sdpa"]), abs=1.5e-4)
    r = root_conftest.run_cli(
        "grade", args[0], "--bank", BANKS / "questions.jsonl", "-p", SELF, "--backend", "openai",
        "--model", "x", "--base-url", "http://127.0.0.1:9", "--attention", "sdpa",
        "-o", tmp_path / "o.jsonl.gz",
    )  # fmt: skip
    root_conftest.assert_user_error(r, "--attention")
