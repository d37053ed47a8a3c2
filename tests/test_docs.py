"""The documentation keeps up with the CLI: README stays a front page, every command has an example
in docs/, every option an example uses exists, and every relative link points at a file.

Commands and options come from the Typer app itself (as Typer's click layer sees it), so a new command without
an example, or an example with a renamed option, fails here instead of misleading a reader.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup

from rubric.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
README_MAX_LINES = 250

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def cli_tree() -> dict[str, TyperGroup]:
    """Phase group name -> its click group, as ``rubric --help`` lists them."""
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    return {name: group for name, group in root.commands.items() if isinstance(group, TyperGroup)}


def all_commands() -> list[tuple[str, str]]:
    return [(g, c) for g, group in cli_tree().items() for c in group.commands]


def docs_text() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in DOCS)


def shell_lines(page: Path) -> list[str]:
    """The ``rubric ...`` invocations in a page's shell blocks, continuation lines joined."""
    lines = []
    for lang, body in FENCE.findall(page.read_text(encoding="utf-8")):
        if lang not in ("bash", "sh", "shell", ""):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith("rubric "):
                lines.append(line)
    return lines


def test_cli_tree_is_found():
    """The test looks at the real command tree (a broken walk would make every check pass)."""
    groups = cli_tree()
    assert {"convert", "bank", "grade", "verify", "evaluate", "prompts"} <= set(groups)
    assert ("evaluate", "leaderboard") in all_commands() and len(all_commands()) > 25


def test_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_MAX_LINES
    assert "make test" in text, ".ci/run calls the README's test command, `make test`"
    assert "make demo" in text


@pytest.mark.parametrize(("group", "command"), all_commands())
def test_every_command_has_an_example_in_docs(group, command):
    assert re.search(rf"\brubric {group} {command}\b", docs_text()), f"no `rubric {group} {command}` in docs/"


def test_examples_use_options_that_exist():
    """Every ``--option`` and ``-o``-style flag of a documented invocation is one the command has."""
    groups = cli_tree()
    checked, wrong = 0, []
    for page in PAGES:
        for line in shell_lines(page):
            words = shlex.split(line, comments=True)
            group = groups.get(words[1]) if len(words) > 1 else None
            if group is None:
                wrong.append(f"{page.name}: unknown group: {line}")
                continue
            rest = words[2:]
            if rest and rest[0] in group.commands:
                command, rest = group.commands[rest[0]], rest[1:]
            elif words[1] == "grade":  # `rubric grade PASSAGES ...` is short for `rubric grade exam`
                command = group.commands["exam"]
            else:
                wrong.append(f"{page.name}: unknown command: {line}")
                continue
            known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
            known |= {"-h", "--help"}
            for word in rest:
                if word == "|" or word.startswith((">", "<", "2>")):
                    break  # a pipe or a redirection ends the invocation
                option = word.split("=", 1)[0]
                if re.fullmatch(r"--[a-z][\w-]*|-[A-Za-z]", option):
                    checked += 1
                    if option not in known:
                        wrong.append(f"{page.name}: {option} is not an option of {command.name}: {line}")
    assert checked > 100, checked
    assert not wrong, "\n".join(wrong)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, blanks -> '-'."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_anchors_are_github_slugs():
    assert "graded-passages-exam_grades-and-grades" in anchors(ROOT / "docs" / "formats.md")


def test_relative_links_resolve():
    """Every relative link names a file that exists, and an anchor one of that page's headings."""
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists() or (anchor and path.suffix == ".md" and anchor not in anchors(path)):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
