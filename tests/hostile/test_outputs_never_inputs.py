"""The property of the output rule over every command that writes files: each output option
pointed at each input of the same command (by its name, through a symbolic link, through a hard
link) exits 2 with one error line before any work, and leaves the input byte for byte as it was.

The commands and their outputs are read from the CLI itself, so a new command or a new output
option that the table below does not cover fails :func:`test_the_table_covers_every_output`.
"""

from __future__ import annotations

import inspect
import os
import typing
from pathlib import Path

import pytest

from helpers import faults

rubric, assert_one_error = faults.rubric, faults.assert_one_error
RATING = faults.graded_fixture.RATING

# command -> arguments naming its inputs ("{key}" = a file of faults.valid_inputs, plus "t.tsv",
# "h.tsv" and "review.json" made below). Outputs are added by the test.
COMMANDS: dict[str, list[str]] = {
    "convert runs": [
        "--topics",
        "{queries.tsv}",
        "-C",
        "{collection.tsv}",
        "--qrels",
        "{qrels.txt}",
        "{run.alpha}",
    ],
    "convert rag": ["-a", "{rag.jsonl}"],
    "convert queries": ["{queries.tsv}"],
    "bank generate": ["--topics", "{queries.tsv}", "--kind", "questions", "--model", "m"],
    "bank nuggetize": ["--passages", "{passages}", "--topics", "{queries.tsv}", "--model", "m"],
    "bank import": ["{items.tsv}"],
    "bank edit": ["{bank}", "--topics", "{queries.tsv}", "--add", "q1=more"],
    "bank split": ["{bank}", "--secret", "0.5", "--seed", "1"],
    "grade exam": ["{passages}", "--bank", "{bank}", "-p", RATING],
    "grade direct": ["{passages}", "--topics", "{queries.tsv}", "-p", "Sun"],
    "grade import": ["{graded}", "--qrels", "{qrels.txt}"],
    "grade merge": ["{graded}", "--order", "{passages}"],
    "grade assign": ["{rag.jsonl}", "--bank", "{bank}", "--topics", "{queries.tsv}", "--model", "m"],
    "evaluate support": ["{rag.jsonl}", "--segments", "{collection.tsv}", "--model", "m"],
    "verify grading": ["{graded}", "--bank", "{bank}"],
    "verify grid": ["{graded}", "--bank", "{bank}"],
    "verify uncovered": ["{graded}"],
    "verify spurious": ["{graded}", "--bank", "{bank}"],
    "verify agreement": ["{graded}", "--judgments", "{qrels.txt}"],
    "verify impact": ["{graded}", "--bank-before", "{bank}", "--bank-after", "{items.tsv}"],
    "verify html": ["{graded}", "--bank", "{bank}"],
    "verify apply": ["{review.json}", "{graded}", "--bank", "{bank}"],
    "verify sample": ["{graded}", "--size", "2", "--bank", "{bank}"],
    "evaluate qrels": ["{graded}", "--bank", "{bank}"],
    "evaluate leaderboard": ["--qrels", "{qrels.txt}", "--run", "{run.alpha}", "-m", "P@5"],
    "evaluate cover": ["{graded}", "--bank", "{bank}"],
    "evaluate correlate": ["--official", "{t.tsv}", "--leaderboard", "{h.tsv}"],
    "evaluate compare": ["--qrels", "{qrels.txt}", "--run", "{run.alpha}", "-m", "P@5"],
    "evaluate nuggets": ["{assigned}"],
    "evaluate estimate": [
        "--graded",
        "{graded}",
        "--human",
        "{qrels.txt}",
        "--run",
        "{run.alpha}",
        "-m",
        "P@5",
    ],
    "evaluate learn": ["{graded}", "--judgments", "{qrels.txt}"],
    "evaluate representative": ["--qrels", "{qrels.txt}", "--run", "{run.alpha}", "-m", "P@5"],
    "evaluate meta": ["cond={t.tsv}", "-R", "{h.tsv}", "--queries", "{items.tsv}"],
}

# (command, input) whose --output may name it: the command writes a new version of that input
# (it reads it completely first; grading in place is tested in test_in_place_grading.py).
IN_PLACE = {
    ("grade exam", "passages"),
    ("grade direct", "passages"),
    ("grade import", "graded"),
    ("bank edit", "bank"),
}


def _commands() -> dict[str, dict[str, str]]:
    """``{"phase command": {output option: input key of the in-place parameter or ""}}`` of every
    command of the CLI that writes a file, read from its parameters' types."""
    from rubric.cli.common import _label, is_output
    from rubric.cli.main import app

    found: dict[str, dict[str, str]] = {}
    for group in app.registered_groups:
        for command in group.typer_instance.registered_commands:
            callback = inspect.unwrap(command.callback)
            hints = typing.get_type_hints(callback, include_extras=True)
            parameters = inspect.signature(callback).parameters
            outputs = [_label(parameters[n], h) for n, h in hints.items() if n in parameters and is_output(h)]
            if outputs:
                found[f"{group.name} {command.name or callback.__name__}"] = dict.fromkeys(outputs, "")
    return found


def test_the_table_covers_every_output():
    assert set(_commands()) == set(COMMANDS)


def _inputs(folder: Path) -> dict[str, Path]:
    f = faults.valid_inputs(folder)
    f["t.tsv"] = folder / "t.tsv"
    f["t.tsv"].write_text("run\tquery\tndcg\nA\tq1\t0.5\nB\tq1\t0.3\nA\tq2\t0.4\nB\tq2\t0.1\n")
    f["h.tsv"] = folder / "h.tsv"
    f["h.tsv"].write_text("run\tquery\tndcg\nA\tq1\t0.6\nB\tq1\t0.2\nA\tq2\t0.5\nB\tq2\t0.2\n")
    f["review.json"] = folder / "review.json"
    f["review.json"].write_text('{"version": 1, "reviewer": "a", "actions": []}\n')
    return f


def _cases() -> list[tuple[str, str, str]]:
    commands = _commands()
    cases = []
    for command, args in COMMANDS.items():
        keys = [a[a.index("{") + 1 : a.index("}")] for a in args if "{" in a]
        for option in commands.get(command, {}):
            cases += [
                (command, option, key)
                for key in keys
                if not (option == "--output" and (command, key) in IN_PLACE)
            ]
    return cases


def _filled(args: list[str], f: dict[str, Path]) -> list[str]:
    """The arguments with each ``{key}`` replaced by the path of that input."""
    out = []
    for a in args:
        if "{" in a:
            a = a[: a.index("{")] + str(f[a[a.index("{") + 1 : a.index("}")]])
        out.append(a)
    return out


@pytest.mark.parametrize(("command", "option", "key"), _cases())
def test_an_output_naming_an_input_is_refused_and_the_input_is_unchanged(tmp_path, command, option, key):
    f = _inputs(tmp_path / "in")
    args = _filled(COMMANDS[command], f)
    victim = f[key]
    (tmp_path / "links").mkdir()
    symlink = tmp_path / "links" / f"sym-{victim.name}"
    symlink.symlink_to(victim)
    hard = tmp_path / "links" / f"hard-{victim.name}"
    os.link(victim, hard)
    others = [o for o in _commands()[command] if o != option]
    for target in (victim, symlink, hard):
        before = faults.snapshot(tmp_path / "in")
        fresh = [x for i, o in enumerate(others) for x in (o, str(tmp_path / f"out{i}.png"))]
        r = rubric(*command.split(), *args, option, target, *fresh)
        assert_one_error(r, "is also an input of this command")
        assert faults.snapshot(tmp_path / "in") == before, (command, option, target)
        assert symlink.is_symlink()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("out")], "no output was written"
