"""Generated bad files through every command group: exit 2, exactly one ``rubric: error:`` line
naming the file, no output file and no temporary file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import faults

RATING = faults.graded_fixture.RATING

NOWHERE = "http://127.0.0.1:9/v1"  # no server: these inputs fail before any request

# command group -> (the valid file a spoiled copy replaces, arguments with {bad}, {out} and inputs)
COMMANDS = {
    "convert runs --queries": (
        "queries.tsv",
        "convert runs -q {bad} -C {collection.tsv} {run.alpha} -o {out}",
    ),
    "convert runs --collection": (
        "collection.tsv",
        "convert runs -q {queries.tsv} -C {bad} {run.alpha} -o {out}",
    ),
    "convert runs RUN": ("run.alpha", "convert runs -q {queries.tsv} -C {collection.tsv} {bad} -o {out}"),
    "convert runs --qrels": (
        "qrels.txt",
        "convert runs -q {queries.tsv} -C {collection.tsv} --qrels {bad} {run.alpha} -o {out}",
    ),
    "convert rag": ("rag.jsonl", "convert rag -a {bad} -o {out}"),
    "convert queries": ("queries.tsv", "convert queries {bad} -o {out}"),
    "bank import": ("items.tsv", "bank import {bad} -o {out}"),
    "bank edit": ("bank", "bank edit {bad} --remove x -o {out}"),
    "grade PASSAGES": ("passages", "grade {bad} --bank {bank} -p " + RATING + " -o {out}"),
    "grade --bank": ("bank", "grade {passages} --bank {bad} -p " + RATING + " -o {out}"),
    "grade direct --queries": ("queries.tsv", "grade direct {passages} -q {bad} -p Sun -o {out}"),
    "grade merge": ("graded", "grade merge {bad} -o {out}"),
    "grade import": ("graded", "grade import {bad} --qrels {qrels.txt} -o {out}"),
    "grade import --qrels": ("qrels.txt", "grade import {graded} --qrels {bad} -o {out}"),
    "verify grid": ("graded", "verify grid {bad} -o {out}"),
    "verify agreement --labels": (
        "qrels.txt",
        "verify agreement --labels {bad} --judgments {qrels.txt} -o {out}",
    ),
    "verify impact": ("bank", "verify impact {graded} -a {bad} -b {bank} -p " + RATING + " -o {out}"),
    "evaluate qrels": ("graded", "evaluate qrels {bad} -o {out}"),
    "evaluate leaderboard --qrels": (
        "qrels.txt",
        "evaluate leaderboard --qrels {bad} --run {run.alpha} -m P@5 -o {out}",
    ),
    "evaluate cover --bank": (
        "bank",
        "evaluate cover {graded} --prompt-class " + RATING + " --bank {bad} -o {out}",
    ),
    "evaluate nuggets": ("assigned", "evaluate nuggets {bad} -o {out}"),
    "evaluate learn": ("graded", "evaluate learn {bad} -o {out}"),
    "evaluate representative --qrels": (
        "qrels.txt",
        "evaluate representative --qrels {bad} --run {run.alpha} -m P.5 -o {out}",
    ),
    "evaluate learn --judgments": ("qrels.txt", "evaluate learn {graded} --judgments {bad} -o {out}"),
    "evaluate learn --apply": ("graded", "evaluate learn {graded} --apply {bad} -o {out}"),
    "evaluate support": (
        "rag.jsonl",
        "evaluate support {bad} --segments {collection.tsv} --model m --base-url " + NOWHERE + " -o {out}",
    ),
    "evaluate support --segments": (
        "collection.tsv",
        "evaluate support {rag.jsonl} --segments {bad} --model m --base-url " + NOWHERE + " -o {out}",
    ),
}
SPOILS = ["empty", "binary", "truncated-gzip", "utf16", "latin1", "json-scalar", "json-nan", "cut-line"]
# an empty file is a valid (empty) input of these, or the error it causes is about something else
EMPTY_IS_FINE = {
    "convert runs RUN",  # a run that retrieved nothing
    "convert runs --collection",  # its error names --collection: no text for the pooled passages
    "bank edit",  # an empty bank
    "grade merge",  # a shard may hold no query
    "verify impact",  # a bank with no items before the edit
    "verify agreement --labels",  # its error names the labels file by name: nothing to compare
    "evaluate cover --bank",
}
NOT_ERRORS = {
    ("convert runs RUN", "json-nan")
}  # 7 columns of a query no topic has: ignored as trec_eval does


def _args(template: str, files: dict[str, Path], bad: Path, out: Path) -> list[str]:
    values = {k: str(v) for k, v in files.items()} | {"bad": str(bad), "out": str(out)}
    return [re.sub(r"\{([^}]+)\}", lambda m: values[m.group(1)], word) for word in template.split()]


CASES = [
    (command, spoil)
    for command in COMMANDS
    for spoil in SPOILS
    if not (spoil == "empty" and command in EMPTY_IS_FINE) and (command, spoil) not in NOT_ERRORS
]


@pytest.mark.parametrize("command, spoil", CASES, ids=[f"{c}-{s}" for c, s in CASES])
def test_a_spoiled_input_is_one_error_and_no_output(tmp_path, command, spoil):
    files = faults.valid_inputs(tmp_path / "in")
    kind, template = COMMANDS[command]
    bad = tmp_path / f"bad-{spoil}"
    bad.write_bytes(
        faults.spoiled(files[kind].read_bytes() if files[kind].suffix != ".gz" else _plain(files[kind]))[
            spoil
        ]
    )
    out = tmp_path / "out" / "result.jsonl.gz"
    r = faults.rubric(*_args(template, files, bad, out))
    faults.assert_one_error(r, str(bad))
    assert not out.exists() and not out.parent.exists()
    assert faults.leftovers(tmp_path) == []


def _plain(path: Path) -> bytes:
    import gzip

    return gzip.decompress(path.read_bytes())


@pytest.mark.parametrize("command", ["convert queries", "evaluate qrels", "verify grid", "bank edit"])
def test_a_missing_file_and_a_directory(tmp_path, command):
    files = faults.valid_inputs(tmp_path / "in")
    _, template = COMMANDS[command]
    out = tmp_path / "out.jsonl"
    missing = tmp_path / "no-such-file"
    faults.assert_one_error(faults.rubric(*_args(template, files, missing, out)), f"{missing}: no such file")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    faults.assert_one_error(faults.rubric(*_args(template, files, folder, out)), f"{folder}: is a directory")
    assert not out.exists()


@pytest.mark.subprocess
def test_prompts_show_into_a_closed_pipe_is_quiet():
    r = faults.bash("rubric prompts show NuggetSelfRatedPrompt | head -c 10")
    assert r.returncode == 0 and len(r.stdout) == 10
