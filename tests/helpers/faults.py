"""Shared helpers of the hostile-input suite: the CLI with bytes in and out, small valid inputs of
every kind, the ways to spoil them, and the file-system faults (read-only folder, full disk).

Test modules import it as ``from helpers import faults``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import TINY, graded_fixture
from helpers.cli import assert_no_traceback, cli_env, run_cli, run_cli_subprocess

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny"


# --- running the CLI -------------------------------------------------------------------------


def rubric(
    *args: object, stdin=None, input: bytes | None = None, cwd: Path | None = None, timeout: float = 300
):
    """``rubric ARGS`` in this process with bytes in and out (``input`` or an open ``stdin``);
    the stderr of every call is checked for a traceback."""
    return run_cli(*args, stdin=stdin, input=input, cwd=cwd, text=False)


def rubric_subprocess(
    *args: object, stdin=None, input: bytes | None = None, cwd: Path | None = None, timeout: float = 300
):
    """``python -m rubric ARGS`` as a child process, for what only a process shows: output to
    ``/dev/fd/1``, pipes, signals."""
    return run_cli_subprocess(*args, stdin=stdin, input=input, cwd=cwd, text=False, timeout=timeout)


def bash(script: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """A bash script (process substitution, pipes) where ``rubric`` is this checkout's CLI."""
    env = cli_env({"RUBRIC": f"{sys.executable} -m rubric"})
    result = subprocess.run(
        ["bash", "-c", f'rubric() {{ $RUBRIC "$@"; }}\nset -o pipefail\n{script}'],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )
    assert_no_traceback(result.stderr, script)
    return result


def error_lines(result) -> list[str]:
    stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode("utf-8", "replace")
    return [line for line in stderr.splitlines() if line.startswith("rubric: error:")]


def assert_one_error(result, *fragments: str) -> str:
    """Exit code 2 and exactly one ``rubric: error:`` line holding every fragment."""
    stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, stderr)
    lines = error_lines(result)
    assert len(lines) == 1, stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones included) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(folder: Path) -> list[str]:
    """Temporary files an interrupted or failed write would leave."""
    return [p.name for p in folder.rglob(".*.tmp")]


# --- valid inputs of every kind ----------------------------------------------------------------


def passage(pid: str, text: str = "a passage", judgment: int | None = None, **extra) -> dict:
    data: dict = {"judgments": [], "rankings": []}
    if judgment is not None:
        data["judgments"] = [{"paragraphId": pid, "query": "q1", "relevance": judgment}]
    return {"paragraph_id": pid, "text": text, "paragraph": "", "paragraph_data": data, **extra}


def write_jsonl(path: Path, records: list, compress: bool | None = None) -> Path:
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    compress = path.name.endswith(".gz") if compress is None else compress
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


def valid_inputs(folder: Path) -> dict[str, Path]:
    """One small valid file of every kind a command reads."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {name: folder / name for name in ("queries.tsv", "qrels.txt", "collection.tsv", "run.alpha")}
    for name, path in files.items():
        shutil.copy(TINY / name, path)
    files["rag.jsonl"] = Path(shutil.copy(TINY / "rag.jsonl", folder / "rag.jsonl"))
    files["graded"] = graded_fixture.write_graded(folder / "graded.jsonl.gz")
    files["bank"] = graded_fixture.write_bank_file(folder / "bank.jsonl.gz")
    files["passages"] = write_jsonl(
        folder / "passages.jsonl.gz", [["q1", [passage("d1", judgment=2), passage("d2", judgment=0)]]]
    )
    files["items.tsv"] = folder / "items.tsv"
    files["items.tsv"].write_text("q1\thow do bees make honey?\nq2\twhy is the sky blue?\n")
    files["assigned"] = write_jsonl(
        folder / "assigned.jsonl",
        [
            {
                "run_id": "r1",
                "query_id": "q1",
                "nuggets": [{"text": "bees", "importance": "vital", "assignment": "support"}],
            }
        ],
    )
    return files


# --- spoiling a file ---------------------------------------------------------------------------


def spoiled(valid: bytes) -> dict[str, bytes]:
    """Ways to damage a file, keyed by a name for the test id."""
    gz = gzip.compress(valid * 50, mtime=0)
    return {
        "empty": b"",
        "binary": bytes(range(256)) * 4,
        "truncated-gzip": gz[: max(len(gz) // 2, 12)],
        "utf16": valid.decode("utf-8").encode("utf-16"),
        "latin1": "caf\xe9 \xe0 la cr\xe8me\n".encode("latin-1") + valid,
        "json-scalar": b"42\n",
        "json-nan": b'["q1", [{"paragraph_id": "d1", "text": "x", "score": NaN}]]\n',
        "cut-line": valid[: len(valid) // 2] + b"\n{\n",
    }


# --- file-system faults ------------------------------------------------------------------------


def device(folder: Path, name: str) -> Path:
    """A character device to write to (``null`` or ``full``). As root it is a private node in
    ``folder``: a regression that replaced its target would otherwise replace /dev/NAME for the
    whole machine. Other users get the real /dev/NAME, which they cannot replace."""
    if os.geteuid() != 0:
        return Path("/dev") / name
    node = folder / f"dev-{name}"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, {"null": 3, "full": 7}[name]))
    except OSError as e:
        pytest.skip(f"cannot make a device node here ({e.strerror})")
    return node


def stdout_names() -> list[str]:
    """Names of standard output to pass as ``-o``. ``/dev/stdout`` only where this user cannot
    replace it (not root), so that a regression cannot break the machine's /dev."""
    names = ["/dev/fd/1", "/proc/self/fd/1"]
    return names if os.geteuid() == 0 else [*names, "/dev/stdout"]


def _mount_tmpfs(target: Path, options: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    target.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    return r.returncode == 0


def _umount(target: Path) -> None:
    subprocess.run(["umount", str(target)], capture_output=True)


@contextlib.contextmanager
def read_only_folder(parent: Path) -> Iterator[Path]:
    """A folder nobody can write to: a read-only tmpfs as root (root ignores permissions), else
    mode 0555; skips where neither works."""
    folder = parent / f"ro-{uuid.uuid4().hex[:6]}"
    if _mount_tmpfs(folder, "ro,size=64k"):
        try:
            yield folder
        finally:
            _umount(folder)
        return
    if os.geteuid() == 0:
        pytest.skip("running as root without permission to mount a read-only tmpfs")
    folder.mkdir()
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


@contextlib.contextmanager
def full_disk(parent: Path, size: str = "16k") -> Iterator[Path]:
    """A folder on a tiny tmpfs that fills up after ``size`` bytes (skips where it cannot mount)."""
    folder = parent / f"full-{uuid.uuid4().hex[:6]}"
    if not _mount_tmpfs(folder, f"size={size}"):
        pytest.skip("cannot mount a small tmpfs here (needs root); /dev/full covers devices")
    try:
        yield folder
    finally:
        _umount(folder)
