"""Options with fixed choices are ``Literal`` types: ``--help`` lists the choices, a value outside
them is one line and exit code 2, shell completion offers them, and each equals the tuple the
library checks (:data:`rubric.cli.choices.MIRRORS`)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from typing import get_args

import pytest

from rubric.cli.choices import MIRRORS


@pytest.mark.parametrize(("choice", "target"), MIRRORS, ids=[target for _, target in MIRRORS])
def test_each_choice_is_the_library_tuple(choice, target):
    module, _, name = target.partition(":")
    assert get_args(choice) == tuple(getattr(importlib.import_module(module), name))


def test_help_lists_the_choices_of_format(cli):
    r = cli("evaluate", "leaderboard", "--help")
    assert r.returncode == 0
    assert "-f, --format <tsv|csv|json|latex|trec_eval>" in r.stdout
    for command in (("evaluate", "compare"), ("evaluate", "estimate"), ("grade", "exam")):
        out = cli(*command, "--help").stdout
        assert {
            ("evaluate", "compare"): "<t|randomization|bootstrap>",
            ("evaluate", "estimate"): "<finite|ppi_py>",
            ("grade", "exam"): "<auto|float32|bfloat16|float16>",
        }[command] in out


def test_a_value_outside_the_choices_is_one_line(cli, user_error):
    r = cli("evaluate", "leaderboard", "--qrels", "q", "-r", "r", "-m", "map", "-f", "xml")
    user_error(r, "--format")
    assert "'xml' is not one of 'tsv', 'csv', 'json', 'latex', 'trec_eval'" in r.stderr
    assert "Value error" not in r.stderr


def test_shell_completion_offers_the_choices(tmp_path):
    """The real command in bash's completion protocol (what `--install-completion` sets up)."""
    env = {
        **os.environ,
        "_RUBRIC_COMPLETE": "complete_bash",
        "COMP_WORDS": "rubric evaluate leaderboard -f ",
        "COMP_CWORD": "4",
    }
    code = "import sys; sys.argv[0] = 'rubric'; from rubric.cli.main import main; main()"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["tsv", "csv", "json", "latex", "trec_eval"]
