"""`rubric grade --devices/--workers`: one process per device, one merged file equal to a one-process run."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BANKS = HERE.parent / "grading" / "data"
SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tiny_models = _load("tiny_models", HERE.parent / "llm" / "tiny_models.py")
root_conftest = _load("root_conftest", HERE.parent / "conftest.py")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A tiny T5, the tiny pool, and the file one process writes (no cache, so nothing is shared)."""
    root = tmp_path_factory.mktemp("scale")
    t5 = tiny_models.build_t5(root / "t5")
    tiny = HERE.parent / "data" / "tiny"
    pool = root / "passages.jsonl.gz"
    r = root_conftest.run_cli(
        "convert", "runs", "--queries", tiny / "queries.tsv", "--collection", tiny / "collection.tsv",
        "--qrels", tiny / "qrels.txt", tiny / "run.alpha", tiny / "run.beta", "-o", pool,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    args = [pool, "--bank", BANKS / "questions.jsonl", "-p", SELF, "-m", t5, "--max-new-tokens", "4"]
    single = root / "single.jsonl.gz"
    r = root_conftest.run_cli("grade", *args, "--no-cache", "--device", "cpu", "-o", single)
    assert r.returncode == 0, r.stderr
    return args, single


def test_two_cpu_workers_equal_one_process(cli, tmp_path, setup):
    args, single = setup
    out = tmp_path / "workers.jsonl.gz"
    cache = tmp_path / "shared.sqlite"
    r = cli("grade", *args, "--devices", "cpu,cpu", "--cache", cache, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "grading with 2 workers on cpu, cpu" in r.stderr
    assert "worker 1/2 (cpu):" in r.stderr and "worker 2/2 (cpu):" in r.stderr
    assert "wrote" in r.stderr and ": 3 queries" in r.stderr
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(single.read_bytes())
    assert not (tmp_path / "workers.jsonl.gz.workers").exists()  # parts are removed after the merge
    assert ", 0 from cache" in r.stderr
    # both processes wrote their answers into the one sqlite file (WAL)
    import sqlite3

    with sqlite3.connect(cache) as db:
        stored = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert stored == int(r.stderr.rsplit(" pairs graded", 1)[0].split()[-1]) > 0  # the total line


def test_bad_worker_options(cli, user_error, tmp_path, setup):
    args, _ = setup
    out = tmp_path / "x.jsonl.gz"
    user_error(cli("grade", *args, "--devices", "cpu,cpu", "--shard", "1/2", "-o", out), "--shard")
    user_error(cli("grade", *args, "--devices", "cpu,tpu", "-o", out), "--device", "tpu")
    user_error(cli("grade", *args, "--devices", "cpu,,cpu", "-o", out), "--devices")
    user_error(cli("grade", *args, "--devices", "cpu", "--workers", "2", "-o", out), "--workers")
    user_error(cli("grade", *args, "--backend", "openai", "--workers", "2", "-o", out), "--workers")
    assert not out.exists()
