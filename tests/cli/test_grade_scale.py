"""`rubric grade --devices/--workers`: one process per device, one merged file equal to a one-process run."""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import BANKS, ROOT, TINY, tiny_models
from helpers import cli as root_conftest

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"


@pytest.fixture(scope="module")
def setup(tmp_path_factory, t5_dir):
    """A tiny T5, the tiny pool, and the file one process writes (no cache, so nothing is shared)."""
    root = tmp_path_factory.mktemp("scale")
    t5 = t5_dir
    tiny = TINY
    pool = root / "passages.jsonl.gz"
    r = root_conftest.run_cli(
        "convert", "runs", "--topics", tiny / "queries.tsv", "--collection", tiny / "collection.tsv",
        "--qrels", tiny / "qrels.txt", tiny / "run.alpha", tiny / "run.beta", "-o", pool,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    args = [pool, "--bank", BANKS / "questions.jsonl", "-p", SELF, "--model", t5, "--max-new-tokens", "4"]
    single = root / "single.jsonl.gz"
    r = root_conftest.run_cli("grade", *args, "--no-cache", "--device", "cpu", "-o", single)
    assert r.returncode == 0, r.stderr
    return args, single


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.subprocess
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
    script = ROOT / "examples" / "slurm" / "grade-array.sbatch"
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
@pytest.mark.subprocess
def test_ray_shards_equal_one_process(cli_subprocess, tmp_path, setup):
    """--ray on a private local Ray instance (127.0.0.1): two shards as tasks, merged == one process."""
    args, single = setup
    out = tmp_path / "ray.jsonl.gz"
    r = cli_subprocess("grade", *args, "--ray", "--workers", "2", "--device", "cpu", "--no-cache", "-o", out)
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


def cmdline(pid: int) -> bytes:
    """The command line of ``pid``; empty once it has ended."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def worker_pids(parent: int) -> list[int]:
    """The spawned grading workers of ``parent`` (not multiprocessing's resource tracker)."""
    pids = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            children = [int(pid) for pid in (task / "children").read_text().split()]
            pids += [pid for pid in children if b"spawn_main" in cmdline(pid)]
    return pids


def worker_number(pid: int) -> int | None:
    """Which ``part-i-of-n`` worker ``pid`` is, from the part's lock file it holds open (None
    before it has taken the lock)."""
    with contextlib.suppress(OSError):  # it may have ended meanwhile
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                name = os.readlink(fd).rsplit("/", 1)[-1]
                if name.startswith("part-") and name.endswith(".lock"):
                    return int(name.split("-")[1])
    return None


def gone(pid: int) -> bool:
    """Ended (a zombie waiting for init to reap it has ended too)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc to find the workers")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.subprocess
def test_workers_die_with_their_parent_and_the_rerun_resumes(cli, tmp_path, setup, sig):
    """kill -9 (or SIGTERM) the parent of `--workers 2` while both workers grade: no worker is left
    after 5 s, and rerunning the command resumes from the parts and writes the one-process file."""
    passages, bank = tiny_models.big_pool(tmp_path)
    t5 = setup[0][6]
    args = ["grade", passages, "--bank", bank, "-p", SELF, "--model", t5, "--no-fast", "--no-cache",
            "--max-new-tokens", "12", "--checkpoint-pairs", "16", "--device", "cpu"]  # fmt: skip
    out = tmp_path / "out.jsonl.gz"
    folder = tmp_path / "out.jsonl.gz.workers"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubric", *map(str, args), "--workers", "2", "-o", out],
        env=root_conftest.cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # Each worker is frozen (SIGSTOP) as soon as its partial holds a finished query, so neither
        # can finish its share while the other is still importing torch: on a fast machine one
        # worker used to finish (its partial renamed) before the other had checkpointed.
        frozen: dict[int, int] = {}  # worker number -> pid
        # A guard against a hang, not a bound on speed: on a loaded machine three processes
        # importing torch can take minutes before the first checkpoints.
        deadline = time.time() + 600
        while time.time() < deadline and proc.poll() is None and len(frozen) < 2:
            for pid in worker_pids(proc.pid):
                number = worker_number(pid)
                if number is None or number in frozen:
                    continue
                partial = folder / f"part-{number}-of-2.jsonl.gz.partial"
                if partial.exists() and partial.read_text().count("\n") >= 2:  # header + a query
                    os.kill(pid, signal.SIGSTOP)
                    frozen[number] = pid
            time.sleep(0.02)
        assert proc.poll() is None and len(frozen) == 2, (
            "the command ended before its workers checkpointed",
            frozen,
            proc.poll(),
        )
        workers = worker_pids(proc.pid)
        assert sorted(workers) == sorted(frozen.values()), (workers, frozen)
        os.kill(proc.pid, sig)
        for w in workers:  # a running worker again, as it would be; a stopped one only dies of SIGKILL
            os.kill(w, signal.SIGCONT)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(gone(w) for w in workers):
            time.sleep(0.05)
        assert all(gone(w) for w in workers), [w for w in workers if not gone(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM and "Traceback" not in proc.stderr.read()
    assert not out.exists() and folder.exists()
    r = cli(*args, "--workers", "2", "-o", out)
    assert r.returncode == 0, r.stderr
    worker_lines = [line for line in r.stderr.splitlines() if line.startswith("worker ")]
    assert len(worker_lines) == 2 and all("queries resumed" in line for line in worker_lines)
    single = tmp_path / "single.jsonl.gz"
    assert cli(*args, "-o", single).returncode == 0
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(single.read_bytes())


def descendants(pid: int) -> list[int]:
    from rubric.grading.reaper import descendants as of

    return sorted(of(pid))


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the 'ray' extra is not installed")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.subprocess
def test_ray_processes_die_with_the_driver(cli_subprocess, tmp_path, setup, sig):
    """kill -9 (or SIGTERM) the driver of a private Ray instance while its tasks grade: none of
    Ray's processes (GCS, raylet, agents, workers) is left after 5 s; the rerun writes the file."""
    passages, bank = tiny_models.big_pool(tmp_path)
    args = ["grade", passages, "--bank", bank, "-p", SELF, "--model", setup[0][6], "--no-fast", "--no-cache",
            "--max-new-tokens", "12", "--device", "cpu", "--ray", "--workers", "2"]  # fmt: skip
    out = tmp_path / "out.jsonl.gz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubric", *map(str, args), "-o", out],
        env=root_conftest.cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.time() + 180
        tree: list[int] = []
        shards: list[int] = []
        while time.time() < deadline and proc.poll() is None:
            tree = descendants(proc.pid)
            shards = [p for p in tree if b"_ray_shard" in cmdline(p)]
            if len(shards) == 2:
                break
            time.sleep(0.2)
        # Frozen so that neither task can finish, and the driver with it, before the kill.
        for p in shards:
            os.kill(p, signal.SIGSTOP)
        assert proc.poll() is None and len(tree) > 4 and len(shards) == 2, (proc.poll(), tree, shards)
        # The watcher notes the processes every half second: every process of this snapshot has
        # been noted by the time of the kill (one started later may not have been, so it is not
        # in the snapshot either).
        tree = descendants(proc.pid)
        time.sleep(1)
        os.kill(proc.pid, sig)
        for p in shards:  # running again, as they would be; a stopped process only dies of SIGKILL
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGCONT)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(gone(p) for p in tree):
            time.sleep(0.05)
        assert [p for p in tree if not gone(p)] == []
    finally:
        if proc.poll() is None:
            proc.kill()
    r = cli_subprocess(*args, "-o", out)
    assert r.returncode == 0, r.stderr
