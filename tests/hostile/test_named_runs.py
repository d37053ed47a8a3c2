"""Runs given as ``NAME=FILE`` and run folders are inputs of the output rule: an output naming
such a run (by ``-o``, ``--plot`` or any other output option) is refused with exit 2 before any
work and the run stays byte for byte as it was; a report written into a folder read as a set of
runs is refused too, since the next command would read it as one more run.

(The audit's cases: ``evaluate leaderboard --run A=r.run -o r.run`` overwrote the run, exit 0.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import faults

rubric, assert_one_error = faults.rubric, faults.assert_one_error

SCORE = ["--qrels", "{qrels.txt}", "-m", "P@5"]
# command -> its arguments with the run given as "{run}" (NAME=FILE or a folder)
COMMANDS: dict[str, list[str]] = {
    "evaluate leaderboard": ["evaluate", "leaderboard", *SCORE, "--run", "{run}"],
    "evaluate compare": ["evaluate", "compare", *SCORE, "--run", "{run}", "--run", "B={run.beta}"],
    "evaluate representative": [
        "evaluate",
        "representative",
        *SCORE,
        "--run",
        "{run}",
        "--run",
        "B={run.beta}",
    ],
    "evaluate estimate": [
        "evaluate",
        "estimate",
        "--qrels",
        "{qrels.txt}",
        "--human",
        "{qrels.txt}",
        "-m",
        "P@5",
        "--run",
        "{run}",
    ],
    "evaluate correlate --sweep": [
        "evaluate",
        "correlate",
        "--sweep",
        "--official",
        "{official}",
        "--qrels",
        "{qrels.txt}",
        "-m",
        "P@5",
        "--run",
        "{run}",
    ],
    "convert runs (argument)": [
        "convert",
        "runs",
        "--topics",
        "{queries.tsv}",
        "-C",
        "{collection.tsv}",
        "{run}",
    ],
    "convert runs --run": [
        "convert",
        "runs",
        "--topics",
        "{queries.tsv}",
        "-C",
        "{collection.tsv}",
        "--run",
        "{run}",
    ],
}
# outputs of each command besides -o
PLOTS = {"evaluate estimate": ["--plot"]}


def _inputs(folder: Path) -> dict[str, Path]:
    f = faults.valid_inputs(folder)
    f["run.beta"] = folder / "run.beta"
    f["run.beta"].write_bytes(f["run.alpha"].read_bytes().replace(b" alpha", b" beta"))
    f["official"] = folder / "official.json"
    f["official"].write_text('{"A": 1, "B": 2}\n')
    return f


def _args(command: str, f: dict[str, Path], run: str) -> list[str]:
    out = []
    for a in COMMANDS[command]:
        if "{" in a:
            key = a[a.index("{") + 1 : a.index("}")]
            a = a[: a.index("{")] + (run if key == "run" else str(f[key]))
        out.append(a)
    return out


def _outputs(command: str) -> list[str]:
    return ["-o", *PLOTS.get(command, [])]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_output_naming_a_named_run_is_refused(tmp_path, command):
    f = _inputs(tmp_path / "in")
    for option in _outputs(command):
        before = faults.snapshot(tmp_path / "in")
        r = rubric(*_args(command, f, f"A={f['run.alpha']}"), option, f["run.alpha"])
        assert_one_error(r, "is also an input of this command", "run.alpha")
        assert faults.snapshot(tmp_path / "in") == before, (command, option)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_output_inside_a_run_folder_is_refused(tmp_path, command):
    f = _inputs(tmp_path / "in")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "run.alpha").write_bytes(f["run.alpha"].read_bytes())
    for option in _outputs(command):
        before = faults.snapshot(tmp_path)
        for target in (runs / "report.tsv", runs / "sub" / "report.png"):
            r = rubric(*_args(command, f, str(runs)), option, target)
            assert_one_error(r, "is also an input of this command", str(runs))
        assert faults.snapshot(tmp_path) == before, (command, option)
        assert sorted(p.name for p in runs.rglob("*")) == ["run.alpha"]


def test_a_report_next_to_the_run_folder_is_written(tmp_path):
    """The folder rule refuses what lies inside the folder, nothing beside it."""
    f = _inputs(tmp_path / "in")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "run.alpha").write_bytes(f["run.alpha"].read_bytes())
    r = rubric(*_args("evaluate leaderboard", f, str(runs)), "-o", tmp_path / "runs.tsv")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "runs.tsv").read_text().startswith("run\t")
