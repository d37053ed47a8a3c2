"""The help a new user reads: plain metavars, whole one-line summaries, the shipped prompts."""

from __future__ import annotations

import re

import pytest

from rubric.cli.main import command


def _paths(group, prefix=()):
    for name, sub in group.commands.items():
        path = (*prefix, name)
        yield path
        if hasattr(sub, "commands"):
            yield from _paths(sub, path)


COMMANDS = list(_paths(command()))
TYPE_METAVAR = re.compile(r"<(path|str|int|float|list\[[^\]]*\]|bool)>")


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_has_plain_metavars_and_whole_summaries(cli, path):
    r = cli(*path, "--help")
    assert r.returncode == 0, r.stderr
    assert not TYPE_METAVAR.search(r.stdout), TYPE_METAVAR.search(r.stdout).group(0)
    assert "_args]" not in r.stdout and "opt." not in r.stdout  # parameter names leaking
    commands = r.stdout.split("Commands:")[1] if "Commands:" in r.stdout else ""
    assert not [line for line in commands.splitlines() if line.rstrip().endswith("...")], commands


def test_options_name_what_they_take(cli):
    text = cli("grade", "direct", "--help").stdout
    for shown in ("--topics FILE", "--prompt PROMPT", "--batch-size N", "{PASSAGES}"):
        assert shown in text, shown
    assert "[RUN]..." in cli("convert", "runs", "--help").stdout
    assert "-r, --run RUN" in cli("evaluate", "leaderboard", "--help").stdout


def test_grade_direct_help_lists_every_shipped_direct_prompt(cli):
    from rubric.prompting.prompts import shipped_prompts

    direct = sorted(p.name for p in shipped_prompts().values() if p.kind == "direct")
    assert {"UMBRELA", "LLMJudge"} <= set(direct)
    text = " ".join(cli("grade", "direct", "--help").stdout.split())
    for name in direct:
        assert re.search(rf"\b{name}\b", text), name
