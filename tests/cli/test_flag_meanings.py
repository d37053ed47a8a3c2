"""One meaning per flag across the CLI (issue 24): the test walks the Typer app, every group and
every command, and checks the rules below on what ``--help`` shows.

The rules:

- a short flag stands for one long flag everywhere (``-m`` is ``--measure``, ``-p`` ``--prompt``,
  ``-q`` ``--per-query``, as trec_eval spells them; ``-o`` ``--output``);
- a long flag that several commands take has one meaning, written down in :data:`MEANINGS`, and
  one type family (file, text, whole number, number, on/off) wherever it appears; it may be
  repeatable in one command and single in another;
- ``--topics FILE`` is the query *texts* input; ``--query ID`` / ``--queries FILE`` the subset
  filter wherever they appear;
- an old spelling in :data:`rubric.cli.renames.RENAMED` is no option of its command any more
  (else the rewrite would hide it), and the spelling it becomes is.
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
import typer

from helpers.cli import run_cli
from rubric.cli.main import COMMANDS, app
from rubric.cli.renames import RENAMED, modernize

# Every long flag that more than one command takes, with its one meaning.
MEANINGS = {
    "--answer-prompt": "grades of this answer-check (verify) prompt",
    "--api-key-file": "file holding the OpenAI-compatible API key",
    "--attention": "attention implementation of a local model",
    "--backend": "grading backend",
    "--baseline": "the run the others are compared with",
    "--by-row": "heatmap cells coloured by their share of the row",
    "--compute-type": "CTranslate2 compute type of a local model",
    "--dpi": "resolution of a PNG figure",
    "--threads": "CPU threads of a CTranslate2 model",
    "--bank": "a test bank file (questions or nuggets)",
    "--base-url": "OpenAI-compatible endpoint",
    "--batch-size": "passages per model batch",
    "--cache": "sqlite response cache file",
    "--checkpoint-pairs": "graded pairs between checkpoints",
    "--compile": "torch.compile a local model",
    "--no-compile": "do not torch.compile a local model",
    "--complete": "trec_eval -c: a query missing from the input counts 0",
    "--concurrency": "requests in flight at once",
    "--confidence": "coverage of the intervals",
    "--device": "torch device of a local model",
    "--devices": "devices of the grading workers",
    "--digits": "decimals of printed or ranked scores",
    "--dtype": "torch dtype of a local model",
    "--facets": "facets of the queries (file)",
    "--fast": "exact fast rating of 0-5 and yes/no prompts",
    "--no-fast": "no fast rating",
    "--format": "format of the file written or read",
    "--judgments": "human judgments (TREC qrels) to compare with or learn from",
    "--kind": "kind of bank items or prompts (questions, nuggets, ...)",
    "--label": "how a passage's label comes from its item grades",
    "--level": "trec_eval -l: grades from this level are relevant",
    "--llm": "grades of this LLM",
    "--map": "labels onto another scale by thresholds (G=L,...)",
    "--max-input-tokens": "longest prompt a model reads (API backends: counted with --api-tokenizer)",
    "--api-tokenizer": "the tokenizer that counts --max-input-tokens for an API backend",
    "--max-new-tokens": "longest answer a model writes",
    "--max-retries": "retries of a failed request",
    "--measure": "evaluation measure (trec_eval or ir_measures name)",
    "--min-grade": "item grade from which an item counts",
    "--min-judgment": "judged relevant from this level",
    "--min-relevant-judgment": "judged relevant from this level",
    "--model": "model that grades or writes",
    "--name-from": "how a run's name comes from its file name",
    "--no-cache": "do not read or write the response cache",
    "--num-beams": "beam search width of a local model",
    "--output": "where the command writes",
    "--parse-retries": "asks again after an unreadable answer",
    "--per-query": "also one value per query (trec_eval -q)",
    "--plot": "figure file to write",
    "--prompt": "a prompt by name (or TOML file): to grade or write with, or whose grades to read",
    "--prompt-class": "old name of --prompt where it selects grades",
    "--prompt-file": "your own prompt file (TOML)",
    "--prompt-type": "grades of this prompt type",
    "--qrels": "relevance judgments file (TREC qrels)",
    "--queries": "subset filter: only the queries of this file",
    "--query": "subset filter: only this query id",
    "--rating-prompt": "grades of this rating prompt (with --answer-prompt)",
    "--ray": "run the grading workers on Ray",
    "--ray-address": "address of the Ray cluster",
    "--resamples": "resamples of a randomization or bootstrap test",
    "--retry-base": "first backoff delay of a retry",
    "--rpm": "requests per minute",
    "--run": "run files or directories of runs",
    "--seed": "seed of a random choice",
    "--shard": "this worker's share of the work (i/n)",
    "--temperature": "sampling temperature of a chat model",
    "--test-collection": "name of the test collection, as the prompts want it",
    "--timeout": "seconds to wait for one answer",
    "--token-budget": "tokens per batch of a local model",
    "--top": "only the first N (items, topics)",
    "--top-k": "ranked passages per run and query that count",
    "--topics": "query texts input (JSON, TSV or JSONL)",
    "--width": "cut texts to this many characters",
    "--workers": "grading worker processes",
}
SHORT = {"-o": "--output", "-m": "--measure", "-p": "--prompt", "-q": "--per-query", "-l": "--level"}


def _options():
    """(command path, option) for every option of every command of the app."""
    root = typer.main.get_command(app)

    def walk(command, path):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))
        else:
            for p in command.params:
                if p.param_type_name == "option" and "--help" not in p.opts:
                    yield path, p

    return list(walk(root, ()))


def _family(option) -> str:
    """The type family of an option's value: file, text, whole number, number or on/off."""
    if option.is_flag:
        return "on/off"
    kind = option.type_descriptor.annotation
    if typing.get_origin(kind) is list:
        kind = typing.get_args(kind)[0]
    if typing.get_origin(kind) is typing.Literal:  # a fixed choice of words (rubric.cli.choices)
        return "text"
    return {Path: "file", str: "text", int: "whole number", float: "number", bool: "on/off"}[kind]


def _long(option) -> list[str]:
    return [o for o in option.opts + option.secondary_opts if o.startswith("--")]


def test_each_short_flag_is_one_long_flag_everywhere():
    seen: dict[str, set[str]] = {}
    for path, option in _options():
        for short in (o for o in option.opts if not o.startswith("--")):
            seen.setdefault(short, set()).add(_long(option)[0])
            assert _long(option)[0] == SHORT.get(short, _long(option)[0]), (path, option.opts)
    assert all(len(longs) == 1 for longs in seen.values()), seen
    assert {"-m", "-p", "-q", "-o"} <= seen.keys()


def test_each_shared_long_flag_has_one_meaning_and_type_family():
    where: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for path, option in _options():
        for name in _long(option):
            where.setdefault(name, []).append((path, _family(option)))
    shared = {name for name, uses in where.items() if len({p for p, _ in uses}) > 1}
    assert shared - MEANINGS.keys() == set(), "write down the meaning of these shared flags"
    for name in shared:
        families = {family for _, family in where[name]}
        assert len(families) == 1, (name, where[name])
    assert set(MEANINGS) <= set(where), set(MEANINGS) - set(where)  # no stale meaning


def test_topics_are_texts_and_queries_the_filter():
    for path, option in _options():
        names = _long(option)
        if "--queries" in names or "--query" in names:
            assert "only" in (option.help or "").lower(), (path, option.opts, option.help)
        if "--topics" in names:
            assert "text" in (option.help or "").lower(), (path, option.help)
    commands = {path for path, _ in _options()}
    for command in [("convert", "runs"), ("bank", "generate"), ("bank", "nuggetize"), ("grade", "direct"),
                    ("grade", "assign")]:  # fmt: skip
        assert any(path == command and "--topics" in _long(o) for path, o in _options()), command
    assert commands


@pytest.mark.parametrize("command", sorted(RENAMED))
def test_old_spellings_are_not_options_and_new_ones_are(command):
    names = {n for path, o in _options() if path == command for n in o.opts + o.secondary_opts}
    for old, new in RENAMED[command].items():
        assert old not in names, (command, old)
        assert new in names, (command, new)


def test_modernize_rewrites_old_spellings_once_with_a_note():
    notes: list[str] = []
    args = ["convert", "runs", "-q", "t.tsv", "--runs=a.run", "--queries", "u", "-qv", "--", "-q"]
    assert modernize(args, COMMANDS, notes.append) == [
        "convert", "runs", "--topics", "t.tsv", "--run=a.run", "--topics", "u", "--topics=v", "--", "-q",
    ]  # fmt: skip
    assert notes == [
        "rubric: note: -q in 'convert runs' is now --topics; the old spelling is removed in 0.3.0",
        "rubric: note: --runs in 'convert runs' is now --run; the old spelling is removed in 0.3.0",
        "rubric: note: --queries in 'convert runs' is now --topics; the old spelling is removed in 0.3.0",
    ]
    assert modernize(["evaluate", "leaderboard", "-q"], COMMANDS, notes.append) == [
        "evaluate",
        "leaderboard",
        "-q",
    ]
    assert modernize(["--version"], COMMANDS) == ["--version"]
    # `rubric grade PASSAGES` is `grade exam`; `grade direct` has its own table
    assert modernize(["grade", "p.jsonl", "-m", "x"], COMMANDS, notes.append) == [
        "grade",
        "p.jsonl",
        "--model",
        "x",
    ]
    assert modernize(["grade", "direct", "p", "-q", "t"], COMMANDS, notes.append)[3:] == ["--topics", "t"]


def test_an_old_spelling_works_through_the_cli_with_a_note():
    new = run_cli("prompts", "list", "--kind", "direct")
    old = run_cli("prompts", "list", "-k", "direct")
    assert new.returncode == old.returncode == 0
    assert old.stdout == new.stdout and "Sun" in new.stdout
    assert (
        old.stderr
        == "rubric: note: -k in 'prompts list' is now --kind; the old spelling is removed in 0.3.0\n"
    )
    assert new.stderr == ""
