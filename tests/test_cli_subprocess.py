"""The real ``python -m rubric``, once per command group, against the in-process runner the rest of
the suite uses: the same exit code, standard output and standard error, for output, a bad file
(exit 2, one line) and a command-line mistake (exit 2, with the program name of the real command)."""

from __future__ import annotations

import pytest

from helpers import BANKS, TINY, graded_fixture
from helpers.cli import run_cli, run_cli_subprocess

pytestmark = pytest.mark.subprocess


def cases(tmp_path) -> dict[str, list]:
    graded = graded_fixture.write_graded(tmp_path / "graded.jsonl.gz")
    rating = graded_fixture.RATING
    return {
        "version": ["--version"],
        "convert": ["convert", "queries", TINY / "queries.tsv", "-f", "jsonl", "-o", "-"],
        "convert-stdin": ["convert", "check", "-"],
        "bank": ["bank", "show", BANKS / "questions.jsonl"],
        "grade-error": ["grade", "merge", tmp_path / "missing.jsonl.gz", "-o", tmp_path / "m.jsonl.gz"],
        "verify": ["verify", "grid", graded, "-p", rating, "-o", "-"],
        "evaluate": ["evaluate", "qrels", graded, "--prompt-class", rating, "-o", "-"],
        "evaluate-usage": ["evaluate", "leaderboard", "--no-such-option"],
        "prompts": ["prompts", "list"],
        "missing-file": ["convert", "queries", tmp_path / "missing.tsv", "-o", "-"],
    }


@pytest.mark.parametrize(
    "name",
    ["version", "convert", "convert-stdin", "bank", "grade-error", "verify", "evaluate", "evaluate-usage",
     "prompts", "missing-file"],
)  # fmt: skip
def test_in_process_runs_are_the_real_command(tmp_path, name):
    args = cases(tmp_path)[name]
    stdin = (tmp_path / "graded.jsonl.gz").read_bytes() if name == "convert-stdin" else None
    real = run_cli_subprocess(*args, input=stdin, text=False)
    here = run_cli(*args, input=stdin, text=False)
    assert (here.returncode, here.stdout, here.stderr) == (real.returncode, real.stdout, real.stderr)
    if name in ("grade-error", "evaluate-usage", "missing-file"):
        assert real.returncode == 2 and real.stderr.startswith(b"rubric: error:"), real.stderr
    else:
        assert real.returncode == 0 and real.stdout, real.stderr
