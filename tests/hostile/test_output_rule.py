"""The output rule, for every command that writes: never an input, atomic files, streams in place,
one line for a failed write, nothing left behind by Ctrl-C or SIGTERM."""

from __future__ import annotations

import glob
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import faults
from helpers.cli import sigint_as_on_a_terminal

rubric, assert_one_error = faults.rubric, faults.assert_one_error
RATING = faults.graded_fixture.RATING


@pytest.fixture
def f(tmp_path) -> dict[str, Path]:
    return faults.valid_inputs(tmp_path / "in")


# --- an output that is an input is refused before any work ------------------------------------


def _same_file_cases(f: dict[str, Path]) -> dict[str, tuple[list, Path]]:
    """(arguments, the input that -o names) of every command group."""
    g, bank, run, qrels = f["graded"], f["bank"], f["run.alpha"], f["qrels.txt"]
    convert_runs = ["convert", "runs", "--topics", f["queries.tsv"], "-C", f["collection.tsv"], run]
    return {
        "verify grid": (["verify", "grid", g, "-o", g], g),
        "verify html": (["verify", "html", g, "-o", g], g),
        "verify impact --needs-grading": (
            ["verify", "impact", g, "--bank-before", bank, "--bank-after", bank, "--needs-grading", bank],
            bank,
        ),
        "grade -o bank": (["grade", f["passages"], "--bank", bank, "-p", RATING, "-o", bank], bank),
        "grade direct -o queries": (
            [
                "grade",
                "direct",
                f["passages"],
                "--topics",
                f["queries.tsv"],
                "-p",
                "Sun",
                "-o",
                f["queries.tsv"],
            ],
            f["queries.tsv"],
        ),
        "convert runs -o run": ([*convert_runs, "-o", run], run),
        "convert runs -o collection": ([*convert_runs, "-o", f["collection.tsv"]], f["collection.tsv"]),
        "convert queries": (
            ["convert", "queries", f["queries.tsv"], "-o", f["queries.tsv"]],
            f["queries.tsv"],
        ),
        "convert rag --queries-out": (
            ["convert", "rag", "-a", f["rag.jsonl"], "-o", f["tmp"], "--queries-out", f["rag.jsonl"]],
            f["rag.jsonl"],
        ),
        "bank import": (["bank", "import", f["items.tsv"], "-o", f["items.tsv"]], f["items.tsv"]),
        "evaluate qrels": (["evaluate", "qrels", g, "-o", g], g),
        "evaluate leaderboard -o qrels": (
            ["evaluate", "leaderboard", "--qrels", qrels, "--run", run, "-m", "P@5", "-o", qrels],
            qrels,
        ),
        "evaluate cover --bank": (["evaluate", "cover", g, "--bank", bank, "-o", bank], bank),
        "evaluate nuggets": (["evaluate", "nuggets", f["assigned"], "-o", f["assigned"]], f["assigned"]),
    }


CASES = [
    "verify grid",
    "verify html",
    "verify impact --needs-grading",
    "grade -o bank",
    "grade direct -o queries",
    "convert runs -o run",
    "convert runs -o collection",
    "convert queries",
    "convert rag --queries-out",
    "bank import",
    "evaluate qrels",
    "evaluate leaderboard -o qrels",
    "evaluate cover --bank",
    "evaluate nuggets",
]


@pytest.mark.parametrize("case", CASES)
def test_output_naming_an_input_is_refused_and_the_input_is_unchanged(f, tmp_path, case):
    f["tmp"] = tmp_path / "out.jsonl"
    args, victim = _same_file_cases(f)[case]
    before = faults.snapshot(tmp_path)
    r = rubric(*args)
    assert_one_error(r, str(victim), "is also an input of this command")
    assert faults.snapshot(tmp_path) == before  # nothing written, nothing replaced


def test_a_link_or_a_hard_link_to_an_input_is_the_input(f, tmp_path):
    link, hard = tmp_path / "link.jsonl.gz", tmp_path / "hard.jsonl.gz"
    link.symlink_to(f["graded"])
    os.link(f["graded"], hard)
    before = f["graded"].read_bytes()
    for out in (link, hard):
        assert_one_error(rubric("verify", "grid", f["graded"], "-o", out), "is also an input")
    assert f["graded"].read_bytes() == before and link.is_symlink()


def test_an_output_inside_an_input_folder_that_would_be_read_is_refused(f, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.run").write_bytes(f["run.alpha"].read_bytes())
    args = ["evaluate", "leaderboard", "--qrels", f["qrels.txt"], "--run", runs, "-m", "P@5"]
    assert_one_error(rubric(*args, "-o", runs / "a.run"), "--run")
    # not a run yet, but the next command reading the folder would score it as one (issue 33)
    assert_one_error(rubric(*args, "-o", runs / "new.tsv"), "--run")
    assert [p.name for p in runs.iterdir()] == ["a.run"]


def test_two_outputs_naming_one_file_are_refused(f, tmp_path):
    out = tmp_path / "both.json"
    r = rubric("convert", "rag", "-a", f["rag.jsonl"], "-o", out, "--queries-out", out)
    assert_one_error(r, "--queries-out", "--output", "is also the output of")
    assert not out.exists()


def test_updating_in_place_is_allowed_where_it_is_the_command(f):
    bank = f["bank"]
    item = faults.graded_fixture.iid("q1", "a")
    r = rubric("bank", "edit", bank, "--remove", item, "-o", bank)
    assert r.returncode == 0, r.stderr
    assert item not in rubric("bank", "show", bank).stdout.decode()


# --- '-' and other streams are written in place -------------------------------------------------


def test_dash_writes_to_stdout_everywhere(f, tmp_path):
    r = rubric("evaluate", "qrels", f["graded"], "--prompt-class", RATING, "-o", "-")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines and all(len(line.split()) == 4 for line in lines)  # TREC qrels on stdout
    r = rubric("convert", "queries", f["queries.tsv"], "-o", "-", "-f", "jsonl")
    assert r.stdout.decode().startswith('{"qid": "q1"')
    r = rubric(
        "convert", "runs", "--topics", f["queries.tsv"], "-C", f["collection.tsv"], f["run.alpha"], "-o", "-"
    )
    assert r.returncode == 0 and r.stdout.startswith(b'["q1", [')  # plain JSON lines, not gzip
    r = rubric("verify", "html", f["graded"], "--prompt-class", RATING, "-o", "-")
    assert r.stdout.startswith(b"<!DOCTYPE html>")
    assert not (Path.cwd() / "-").exists() and not list(tmp_path.rglob("-"))


@pytest.mark.subprocess
@pytest.mark.parametrize("name", faults.stdout_names())
def test_stdout_redirected_to_a_file_is_written_not_replaced(f, tmp_path, name):
    target = tmp_path / "redirected.tsv"
    target.write_text("")
    inode = target.stat().st_ino
    with target.open("wb") as out:
        r = subprocess.run(
            [sys.executable, "-m", "rubric", "convert", "queries", f["queries.tsv"], "-o", name],
            stdout=out,
            stderr=subprocess.PIPE,
            env=faults.cli_env(),
        )
    assert r.returncode == 0, r.stderr
    assert target.stat().st_ino == inode  # the shell's file, not a new one
    assert '"q1": "how do bees make honey"' in target.read_text()


def test_a_fifo_and_a_device_are_written_in_place(f, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = rubric("convert", "queries", f["queries.tsv"], "-o", fifo)
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr
    assert b'"q2": "why is the sky blue"' in got[0]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    null = faults.device(tmp_path, "null")
    r = rubric("convert", "queries", f["queries.tsv"], "-o", null)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.stat(null).st_mode)  # still the device


def test_a_link_to_a_file_stays_a_link_and_permissions_are_kept(f, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    r = rubric("convert", "queries", f["queries.tsv"], "-o", link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and '"q1"' in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert faults.leftovers(tmp_path) == []


@pytest.mark.subprocess
def test_a_closed_stdout_pipe_is_quiet(f):
    script = f"rubric convert queries {f['queries.tsv']} -o - -f tsv | head -c 5"
    r = faults.bash(script)
    assert r.returncode == 0 and r.stdout == b"q1\thow"[:5]


# --- a failed write: one line with the path and the reason, nothing left ------------------------


def _write(f: dict[str, Path], out: Path | str):
    return rubric("convert", "queries", f["queries.tsv"], "-o", out)


def test_read_only_folder(f, tmp_path):
    with faults.read_only_folder(tmp_path) as ro:
        r = _write(f, ro / "q.json")
        line = assert_one_error(r, f"{ro / 'q.json'}: cannot write")
        assert "Read-only file system" in line or "Permission denied" in line
        assert list(ro.iterdir()) == []


def test_full_disk_keeps_the_old_file(f, tmp_path):
    big = tmp_path / "big.tsv"
    big.write_text("".join(f"q{i}\t{'word ' * 30}\n" for i in range(3000)))
    with faults.full_disk(tmp_path, "16k") as disk:
        old = disk / "q.json"
        old.write_text("old\n")
        r = rubric("convert", "queries", big, "-o", old)
        assert_one_error(r, f"{old}: cannot write (No space left on device)")
        assert old.read_text() == "old\n"
        assert sorted(p.name for p in disk.iterdir()) == ["q.json"]  # no temporary file
        r = rubric("convert", "queries", big, "-o", disk / "new" / "q.json")
        assert_one_error(r, "No space left on device")
        assert sorted(p.name for p in disk.iterdir()) == ["q.json"]  # the folder it made is gone


def test_a_full_device(f, tmp_path):
    full = faults.device(tmp_path, "full")
    assert_one_error(_write(f, full), f"{full}: cannot write (No space left on device)")
    assert stat.S_ISCHR(os.stat(full).st_mode)


@pytest.mark.parametrize(
    "target, message",
    [
        (".", ".: is a directory, expected a file name"),
        ("", ".: is a directory, expected a file name"),  # the shell's -o '' reaches us as '.'
        ("{folder}", "{folder}: is a directory, expected a file name"),
        ("{file}/x.json", "{file}/x.json: cannot write (Not a directory)"),
    ],
)
def test_bad_targets(f, tmp_path, target, message):
    folder, file = tmp_path / "folder", tmp_path / "file"
    folder.mkdir()
    file.write_text("x")
    before = faults.snapshot(tmp_path)
    r = rubric(
        "convert", "queries", f["queries.tsv"], "-o", target.format(folder=folder, file=file), cwd=tmp_path
    )
    assert_one_error(r, message.format(folder=folder, file=file))
    assert faults.snapshot(tmp_path) == before


def test_a_missing_parent_folder_is_created(f, tmp_path):
    out = tmp_path / "new" / "deeper" / "q.json"
    assert _write(f, out).returncode == 0
    assert '"q1"' in out.read_text()


# --- Ctrl-C and SIGTERM while the output is being written ---------------------------------------


@pytest.mark.parametrize(
    "sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
@pytest.mark.subprocess
def test_a_signal_during_the_write_leaves_the_old_file_and_no_temporary_file(tmp_path, sig, code, word):
    big = tmp_path / "big.tsv"
    # 600,000 queries: about 4.5 s of writing on a quiet machine, so that a test process starved
    # of CPU by its neighbours still signals before the write ends (200,000 gave 1.5 s, too short
    # once in a loaded CI run: the child had finished and exited 0)
    big.write_text("".join(f"q{i}\t{'word ' * 25}\n" for i in range(600_000)))
    out = tmp_path / "out.jsonl.gz"
    out.write_text("old\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubric", "convert", "queries", big, "-f", "jsonl", "-o", out],
        stderr=subprocess.PIPE,
        env=faults.cli_env(),
        preexec_fn=sigint_as_on_a_terminal,
    )
    deadline = time.monotonic() + 120
    while not glob.glob(str(tmp_path / ".out.jsonl.gz.*.tmp")):  # the write has begun
        assert proc.poll() is None and time.monotonic() < deadline, "finished before it was signalled"
        time.sleep(0.002)
    proc.send_signal(sig)
    stderr = proc.communicate(timeout=120)[1].decode()
    faults.assert_no_traceback(stderr, sig)
    assert proc.returncode == code, stderr
    assert stderr.strip().endswith(f"rubric: {word}")
    assert out.read_text() == "old\n"
    assert faults.leftovers(tmp_path) == []
