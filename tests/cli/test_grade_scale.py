"""`rubric grade --devices/--workers`: one process per device, one merged file equal to a one-process run."""

from __future__ import annotations

import gzip
import importlib.util
import os
import subprocess
import sys
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


FAKE_SBATCH = """#!/bin/bash
# A one-machine stand-in for sbatch: runs an array's tasks one after another, then the dependent job.
echo "sbatch $*" >> "$SBATCH_LOG"
array=""; dep=""
for a in "$@"; do
    case "$a" in --array=*) array=${a#--array=} ;; --dependency=*) dep=${a#--dependency=} ;; esac
done
script=${@: -2:1}; mode=${@: -1}
if [[ -n "$array" ]]; then
    for i in $(seq ${array%-*} ${array#*-}); do SLURM_ARRAY_TASK_ID=$i bash "$script" "$mode" || exit 1; done
    echo 101
else
    bash "$script" "$mode" || exit 1
    echo 102
fi
"""


def test_slurm_array_script(tmp_path, setup):
    """examples/slurm/grade-array.sbatch, submitted through a local stand-in for sbatch."""
    args, single = setup
    pool, bank, model = args[0], args[2], args[6]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(FAKE_SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    out = tmp_path / "merged.jsonl.gz"
    env = root_conftest.cli_env(
        {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "SBATCH_LOG": str(tmp_path / "sbatch.log"),
            "PASSAGES": str(pool),
            "BANK": str(bank),
            "MODEL": str(model),
            "OUT": str(out),
            "SHARDS": "2",
            "DEVICE": "cpu",
            "GRADE_ARGS": "--max-new-tokens 4 --no-cache",
            "RUBRIC": f"{sys.executable} -m rubric",
        }
    )
    script = HERE.parent.parent / "examples" / "slurm" / "grade-array.sbatch"
    r = subprocess.run(["bash", str(script), "submit"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    root_conftest.assert_no_traceback(r.stderr, script)
    assert "submitted array 101 (2 tasks) and merge job 102" in r.stdout
    log = (tmp_path / "sbatch.log").read_text().splitlines()
    assert "--array=1-2" in log[0] and "--dependency=afterok:101" in log[1]
    assert sorted(p.name for p in (tmp_path / "merged.jsonl.gz.parts").iterdir()) == [
        "part-1.jsonl.gz",
        "part-2.jsonl.gz",
    ]
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(single.read_bytes())


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the 'ray' extra is not installed")
def test_ray_shards_equal_one_process(cli, tmp_path, setup):
    """--ray on a private local Ray instance (127.0.0.1): two shards as tasks, merged == one process."""
    args, single = setup
    out = tmp_path / "ray.jsonl.gz"
    r = cli("grade", *args, "--ray", "--workers", "2", "--device", "cpu", "--no-cache", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "shard 1/2 (ray):" in r.stderr and "shard 2/2 (ray):" in r.stderr
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(single.read_bytes())
    assert not (tmp_path / "ray.jsonl.gz.workers").exists()


def test_ray_options(cli, user_error, tmp_path, setup):
    args, _ = setup
    out = tmp_path / "x.jsonl.gz"
    user_error(cli("grade", *args, "--ray", "-o", out), "--ray", "--workers")
    user_error(cli("grade", *args, "--ray-address", "auto", "-o", out), "--ray-address")
    assert not out.exists()
