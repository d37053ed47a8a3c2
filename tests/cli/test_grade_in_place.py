"""Grading a file in place (``-o`` naming the passages file) with a query selection or a shard:
the queries not graded are copied through unchanged, in file order; nothing of the file is lost."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import BANKS, TINY, tiny_models
from helpers import cli as root_conftest

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
NUGGET = "NuggetSelfRatedPrompt"


def lines(path: Path) -> list:
    return [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, tiny_models_dirs):
    """A graded file of the tiny pool (3 queries, one question prompt) and the model's arguments."""
    folder = tmp_path_factory.mktemp("in-place")
    pool = folder / "passages.jsonl.gz"
    r = root_conftest.run_cli(
        "convert", "runs", "--topics", TINY / "queries.tsv", "--collection", TINY / "collection.tsv",
        "--qrels", TINY / "qrels.txt", TINY / "run.alpha", TINY / "run.beta", "-o", pool,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    model = ["--model", tiny_models_dirs["t5"], "--max-new-tokens", "4", "--cache", folder / "c.sqlite"]
    out = folder / "graded.jsonl.gz"
    r = root_conftest.run_cli(
        "grade", pool, "--bank", BANKS / "questions.jsonl", "-p", SELF, *model, "-o", out
    )
    assert r.returncode == 0, r.stderr
    return out, model


def _grade_in_place(cli, graded, tmp_path, *args):
    original, model = graded
    g = tmp_path / "g.jsonl.gz"
    shutil.copy(original, g)
    r = cli("grade", g, "--bank", BANKS / "nuggets.jsonl", "-p", NUGGET, *model, *args, "-o", g)
    return r, lines(original), lines(g)


def _classes(query: list) -> set[str]:
    return {e["prompt_info"]["prompt_class"] for p in query[1] for e in p.get("exam_grades", [])}


def test_a_query_graded_in_place_keeps_every_other_query(cli, graded, tmp_path):
    r, before, after = _grade_in_place(cli, graded, tmp_path, "--query", "q1")
    assert r.returncode == 0, r.stderr
    assert "2 queries not selected kept as they were" in r.stderr
    assert [q for q, _ in after] == [q for q, _ in before] == ["q1", "q2", "q3"]
    assert after[1:] == before[1:]  # q2, q3 equal as JSON values: their grades are kept
    assert _classes(after[0]) == {SELF, NUGGET}  # q1 graded again: the new prompt added
    assert not list(tmp_path.glob("g.jsonl.gz.*")) and not list(tmp_path.glob(".g.*"))


def test_a_shard_graded_in_place_keeps_the_other_shards(cli, graded, tmp_path):
    from rubric.grading.shards import shard_of

    r, before, after = _grade_in_place(cli, graded, tmp_path, "--shard", "1/2")
    assert r.returncode == 0, r.stderr
    assert [q for q, _ in after] == [q for q, _ in before]
    for old, new in zip(before, after, strict=True):
        if shard_of(old[0], 2) == 1:
            assert _classes(new) == {SELF, NUGGET}
        else:
            assert new == old


def test_direct_grading_in_place_with_a_query(cli, graded, tmp_path):
    original, model = graded
    g = tmp_path / "g.jsonl.gz"
    shutil.copy(original, g)
    r = cli(
        "grade", "direct", g, "--topics", TINY / "queries.tsv", "-p", "Sun", *model, "--query", "q2", "-o", g
    )
    assert r.returncode == 0, r.stderr
    before, after = lines(original), lines(g)
    assert [after[0], after[2]] == [before[0], before[2]]
    assert (
        all(p.get("grades") for p in after[1][1])
        and after[1][1][0]["exam_grades"] == before[1][1][0]["exam_grades"]
    )


def test_workers_with_a_selection_in_place_are_refused_before_any_work(cli, graded, tmp_path):
    original, model = graded
    g = tmp_path / "g.jsonl.gz"
    shutil.copy(original, g)
    r = cli("grade", g, "--bank", BANKS / "nuggets.jsonl", "-p", NUGGET, *model, "--query", "q1",
            "--workers", "2", "-o", g)  # fmt: skip
    root_conftest.assert_user_error(r, "in place", "--workers")
    assert g.read_bytes() == original.read_bytes()


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_partial_line_that_does_not_match_the_input_is_set_aside(cli, tmp_path, tiny_models_dirs):
    """A partial with the right header but a line of other passages (forged, or left by another
    input) is not resumed as it is: that query is graded again, with a warning."""
    passages, bank = tiny_models.big_pool(tmp_path)
    args = ["grade", passages, "--bank", bank, "-p", SELF, "--model", tiny_models_dirs["t5"], "--no-fast"]
    args += ["--max-new-tokens", "12", "--checkpoint-pairs", "16", "--cache", tmp_path / "c.sqlite"]
    clean = tmp_path / "clean.jsonl.gz"
    assert cli(*args, "-o", clean).returncode == 0
    out, partial = tmp_path / "out.jsonl.gz", tmp_path / "out.jsonl.gz.partial"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubric", *map(str, args), "--no-cache", "-o", out],
        env=root_conftest.cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if partial.exists() and partial.read_text().count("\n") >= 3:  # header + 2 finished queries
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    head, first, *rest = partial.read_text().splitlines(keepends=True)
    forged = json.loads(first)[0]
    partial.write_text(head + json.dumps([forged, []]) + "\n" + "".join(rest))
    r = cli(*args, "-o", out)
    assert r.returncode == 0, r.stderr
    assert f"query {forged} does not match the input" in r.stderr
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(clean.read_bytes())
    assert not partial.exists() and not list(tmp_path.glob(".out.jsonl.gz.*"))
