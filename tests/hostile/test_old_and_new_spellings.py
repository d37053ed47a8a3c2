"""An option's old and new spellings together are one error naming both (exit 2), for every
renamed option of every command; rewriting old spellings never touches an option's value.

(The audit's cases: ``grade direct --topics A --queries B`` and ``convert runs --topics A
--queries B`` used B's texts, exit 0; ``--test-collection -qtest`` became ``--topics=test``;
``--model -m`` sent the model name ``--model``.)
"""

from __future__ import annotations

import functools

import pytest

from helpers import faults
from rubric.cli.main import COMMANDS, command, spellings
from rubric.cli.renames import RENAMED, modernize

rubric, assert_one_error = faults.rubric, faults.assert_one_error


@functools.cache
def _cli():
    return command()


def _options(name: tuple[str, str]):
    return spellings(_cli(), name)


def _cases() -> list[tuple[tuple[str, str], str, str]]:
    return [(name, old, new) for name, table in RENAMED.items() for old, new in table.items()]


@pytest.mark.parametrize(("name", "old", "new"), _cases())
def test_old_and_new_spelling_together_is_one_error(tmp_path, name, old, new):
    takes_value = _options(name)[new][1]
    first, second = ([new, "a"], [old, "b"]) if takes_value else ([new], [old])
    before = faults.snapshot(tmp_path)
    for args in ([*first, *second], [*second, *first]):
        r = rubric(*name, *args, "-o", tmp_path / "out", cwd=tmp_path)
        assert_one_error(r, old, new, "one option")
        assert "note:" not in r.stderr.decode()
    assert faults.snapshot(tmp_path) == before


def test_the_audit_cases_through_the_cli(tmp_path):
    f = faults.valid_inputs(tmp_path / "in")
    b = tmp_path / "b.tsv"
    b.write_text("q1\tanother text\n")
    for args in (
        [
            "convert",
            "runs",
            "--topics",
            f["queries.tsv"],
            "--queries",
            b,
            "-C",
            f["collection.tsv"],
            f["run.alpha"],
        ],
        ["grade", "direct", f["passages"], "--topics", f["queries.tsv"], "--queries", b, "-p", "Sun"],
        ["grade", "direct", f["passages"], "-q", b, "--topics=" + str(f["queries.tsv"]), "-p", "Sun"],
    ):
        r = rubric(*args, "-o", tmp_path / "out.jsonl")
        assert_one_error(r, "--queries" if "--queries" in args else "-q", "--topics")
        assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (  # -qtest is the test collection's name, not -q test
            ["bank", "generate", "--test-collection", "-qtest", "-q", "t.tsv"],
            ["bank", "generate", "--test-collection", "-qtest", "--topics", "t.tsv"],
        ),
        (  # a model named -m stays the model's name
            ["grade", "direct", "p", "--model", "-m", "--queries", "t.tsv"],
            ["grade", "direct", "p", "--model", "-m", "--topics", "t.tsv"],
        ),
        (  # the value of an old spelling is its value too
            ["bank", "generate", "--queries", "-m", "--model", "x"],
            ["bank", "generate", "--topics", "-m", "--model", "x"],
        ),
        (
            ["convert", "runs", "--runs", "--queries", "-C", "c.tsv", "--queries=t"],
            ["convert", "runs", "--run", "--queries", "-C", "c.tsv", "--topics=t"],
        ),
    ],
)
def test_renaming_never_touches_an_option_value(args, expected):
    notes: list[str] = []
    assert modernize(args, COMMANDS, notes.append, _options) == expected
    assert notes and all(n.startswith("rubric: note:") for n in notes)
