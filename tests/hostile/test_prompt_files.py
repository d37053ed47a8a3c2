"""Hostile prompt files: each mistake is one `rubric: error:` line naming the file (and the line
where there is one), exit code 2, before any model loads -- never a traceback, never a run that
grades with a prompt that does not show the model what it needs."""

from __future__ import annotations

import pytest

from helpers import BANKS, TINY
from rubric.prompting.prompts import load_prompt_file, prompts_dir, shipped_prompts

BANK = BANKS / "questions.jsonl"

GOOD = """name = "Mine"
kind = "question"
parser = "self_rating"
description = "my rating prompt"
template = '''Question: {question}
Context: {context}
Rating:'''
"""

# (what is wrong, the file's text, what the error says; "LINE" = the file:line prefix)
CASES = [
    (
        "misspelled placeholder",
        GOOD.replace("{question}", "{qeury}"),
        "{path}:5: unknown placeholder {qeury}",
    ),
    (
        "unclosed placeholder",
        GOOD.replace("{context}", "{context"),
        "{path}:6: placeholder {context is not closed",
    ),
    ("no context", GOOD.replace("Context: {context}\n", ""), "{path}: a question prompt needs {context}"),
    ("no question", GOOD.replace("{question}", "the question"), "{path}: a question prompt needs {question}"),
    ("stray closing brace", GOOD.replace("Rating:", "Rating: }"), "{path}:7: '}' without a '{'"),
    ("open brace", GOOD.replace("Rating:", "Rating: { 0-5"), "{path}:7: '{' is never closed"),
    (
        "description is a number",
        GOOD.replace('"my rating prompt"', "42"),
        "{path}: description must be a string",
    ),
    ("system is a table", GOOD + "system = { a = 1 }\n", "{path}: system must be a string, got a table"),
    ("unknown kind", GOOD.replace('"question"', '"qestion"'), "{path}: kind 'qestion' is unknown"),
    ("TOML syntax", GOOD.replace('name = "Mine"', 'name = "Mine'), "{path}:1: not a valid TOML prompt file"),
    ("direct without query", GOOD.replace('"question"', '"direct"'), "{path}: a direct prompt needs {query}"),
]


@pytest.mark.parametrize(("what", "text", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_prompt_files_are_user_errors(cli, user_error, tmp_path, what, text, message):
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    user_error(cli("prompts", "list", "--prompt-file", path), message.replace("{path}", str(path)))
    out = tmp_path / "graded.jsonl.gz"
    r = cli("grade", TINY / "rag.jsonl", "--bank", BANK, "--prompt-file", path, "-p", "Mine", "-o", out)
    user_error(r, message.replace("{path}", str(path)))
    assert not out.exists()


def test_a_latin_1_prompt_file_names_the_line(cli, user_error, tmp_path):
    path = tmp_path / "latin.toml"
    path.write_bytes(GOOD.replace("my rating prompt", "caf\u00e9 rating").encode("latin-1"))
    user_error(cli("prompts", "list", "--prompt-file", path), f"{path}:4: not UTF-8 text")


def test_a_directory_or_a_missing_file(cli, user_error, tmp_path):
    user_error(cli("prompts", "list", "--prompt-file", tmp_path), f"{tmp_path}: is a directory")
    user_error(
        cli("prompts", "list", "--prompt-file", tmp_path / "none.toml"), "none.toml: no such prompt file"
    )


def test_the_good_prompt_and_every_shipped_prompt_load(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(GOOD, encoding="utf-8")
    assert load_prompt_file(path).placeholders == ["question", "context"]
    shipped = sorted(prompts_dir().glob("*.toml"))
    assert len(shipped) == len(shipped_prompts()) >= 19
    for f in shipped:
        load_prompt_file(f)  # the checks hold for what we ship


def test_json_examples_in_templates_need_no_escaping(tmp_path):
    path = tmp_path / "gen.toml"
    path.write_text(
        'name = "G"\nkind = "generate"\nparser = "json_list"\n'
        "template = '''Topic: {query}\nAnswer as {\"questions\": [q1, q2]}'''\n",
        encoding="utf-8",
    )
    assert load_prompt_file(path).render(query="bees").endswith('{"questions": [q1, q2]}')
