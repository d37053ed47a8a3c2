"""Streaming readers change no output on real graded files: the RUBRIC-format DL19 pool with
LLM criteria grades (one line per passage, 9,260 lines for 43 queries) and the rubric-llm-judge
dev file (one line per query, five kinds of grades, direct ones included), every command that
reads them against the baseline CLI (before streaming), byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DL19 = ("naghmefarzi-llmjudge", "rubric_format_inputs", "dl2019_test_4prompts_llama70b.jsonl.gz")
DEV = ("rubric-llm-judge", "all-ExtraTrees", "dev.jsonl.gz")


def _helper():
    from helpers import baseline_cli

    return baseline_cli


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    return _helper().baseline_src(tmp_path_factory.mktemp("baseline"))


@pytest.mark.parametrize(
    ("parts", "rating", "other"),
    [
        (DL19, "FourPrompts", "FourAggregationPrompt"),
        (DEV, "QuestionSelfRatedUnanswerablePromptWithChoices", "exampp-llmjudge-labelling"),
    ],
)
def test_real_files_give_the_baseline_output(shared, parts, rating, other, baseline, tmp_path):
    graded = str(shared(*parts))
    commands = [
        ["convert", "check", graded],
        ["evaluate", "qrels", graded, "--prompt-class", rating, "-o", "a.qrels"],
        ["evaluate", "qrels", graded, "--prompt-class", other, "--label", "count", "-o", "b.qrels"],
        ["evaluate", "cover", graded, "--prompt-class", rating],  # no rankings: the same error
        ["verify", "agreement", graded, "-p", rating, "-p", other, "-j", "2", "-f", "latex"],
        ["verify", "uncovered", graded, "-p", rating, "-j", "2", "-o", "u.tsv"],
        ["verify", "spurious", graded, "-p", rating, "-o", "s.tsv"],
        ["verify", "grid", graded, "-p", rating, "-o", "grid.tsv"],
        ["verify", "grading", graded, "-p", rating, "--query", "156493", "--query", "1037798", "-f", "md"],
        ["verify", "html", graded, "-p", rating, "-o", "review.html"],
    ]
    for args in commands:
        _helper().same_outputs(baseline, tmp_path, args)
