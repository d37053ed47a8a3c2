"""`rubric prompts list|show` through the real CLI."""

from __future__ import annotations

from pathlib import Path

from rubric.prompting.prompts import prompts_dir

PAPER_PROMPTS = [
    "QuestionSelfRatedUnanswerablePromptWithChoices",
    "NuggetSelfRatedPrompt",
    "QuestionCompleteConciseUnanswerablePromptWithChoices",
    "NuggetExtractionPrompt",
    "QuestionCompleteConcisePromptWithAnswerKey2",
    "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2",
    "FagB",
    "FagB_few",
    "HELM",
    "Sun",
    "Sun_few",
    "Thomas",
]

USER_PROMPT = """name = "MyRelevance"
kind = "direct"
parser = "rating_0_3"
description = "my own 0-3 relevance prompt"
template = '''Query: {query}
Passage: {context}
Relevance (0-3):'''
"""


def _user_prompt(tmp_path: Path) -> Path:
    f = tmp_path / "mine.toml"
    f.write_text(USER_PROMPT, encoding="utf-8")
    return f


def test_list_shows_every_paper_prompt(cli):
    r = cli("prompts", "list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "PARSER", "DESCRIPTION"]
    rows = {line.split()[0]: line.split()[1:3] for line in lines[1:]}
    for name in PAPER_PROMPTS:
        assert name in rows, name
    assert rows["Thomas"] == ["direct", "rating_0_2"]
    assert rows["NuggetSelfRatedPrompt"] == ["nugget", "self_rating"]
    assert "FaggioliB" in r.stdout  # the paper's name is an alias


def test_list_kind_and_user_files(cli, tmp_path):
    f = _user_prompt(tmp_path)
    r = cli("prompts", "list", "--kind", "direct", "--prompt-file", f)
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()[1:]]
    assert sorted(names) == [
        "FagB", "FagB_few", "HELM", "LLMJudge", "MyRelevance", "Sun", "Sun_few", "Thomas", "UMBRELA"
    ]  # fmt: skip
    assert "my own 0-3 relevance prompt" in r.stdout and str(f) in r.stdout


def test_show_prints_the_file_exactly(cli):
    for name in ("NuggetSelfRatedPrompt", "FagB_few"):
        r = cli("prompts", "show", name)
        assert r.returncode == 0, r.stderr
        assert r.stdout == (prompts_dir() / f"{name}.toml").read_text(encoding="utf-8")


def test_show_example_renders_the_template(cli, tmp_path):
    r = cli("prompts", "show", "FaggioliB", "--example", "--set", "query=is the sky blue")
    assert r.returncode == 0, r.stderr
    rendered = r.stdout.split("# ---- rendered example", 1)[1]
    assert "Question: is the sky blue\nPassage: Plants make their food" in rendered
    assert rendered.rstrip().endswith("# ---- valid answers: yes, no, Yes, No")
    assert "{query}" not in rendered and "{query}" in r.stdout  # file above, filled text below

    r = cli("prompts", "show", "MyRelevance", "--prompt-file", _user_prompt(tmp_path), "-e")
    assert r.returncode == 0, r.stderr
    assert "Query: how do plants make food\nPassage: Plants make" in r.stdout
    assert "valid answers: 0, 1, 2, 3" in r.stdout


def test_show_errors(cli, user_error, tmp_path):
    user_error(cli("prompts", "show", "NoSuchPrompt"), "NAME: unknown prompt 'NoSuchPrompt'", "Thomas")
    r = cli("prompts", "show", "HELM", "--set", "query=x")
    user_error(r, "--set: only meaningful with --example")
    assert r.stdout == ""
    user_error(cli("prompts", "show", "HELM", "-e", "--set", "question=x"), "--set:", "query, context")
    user_error(
        cli("prompts", "show", "HELM", "--prompt-file", tmp_path / "missing.toml"),
        "missing.toml: no such prompt file",
    )
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "B"\nkind = "question"\nparser = "sometimes"\ntemplate = "{question}"\n')
    user_error(
        cli("prompts", "list", "--prompt-file", bad), f"{bad}: parser: unknown answer parser 'sometimes'"
    )
    user_error(cli("prompts", "list", "--kind", "poem"), "--kind: no prompt of kind 'poem'", "direct")


def test_documented_prompt_example_loads(cli, tmp_path):
    page = (Path(__file__).resolve().parents[2] / "docs" / "prompts.md").read_text(encoding="utf-8")
    section = page.split("## Your own prompt", 1)[1].split("\n## ", 1)[0]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    f = tmp_path / "documented.toml"
    f.write_text(example, encoding="utf-8")
    r = cli("prompts", "show", "MyRelevance", "--prompt-file", f, "--example")
    assert r.returncode == 0, r.stderr
    assert "Score (0-3):" in r.stdout and "valid answers: 0, 1, 2, 3" in r.stdout
