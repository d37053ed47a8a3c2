"""docs/cli.md, the command-line reference, written from the Typer app itself.

Every command's ``--help`` (usage, description, options with their defaults and choices) at a
fixed width, one section per command in the order ``rubric --help`` lists them, so the page is
what the CLI says and cannot drift from it: ``make lint`` runs ``python -m rubric.cli.docs
--check``, which fails when the committed page differs from what the app writes now.

    python -m rubric.cli.docs            # rewrite docs/cli.md
    python -m rubric.cli.docs --check    # exit 1 when docs/cli.md is out of date
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The page, relative to the repository root (this file is src/rubric/cli/docs.py).
PAGE = Path(__file__).resolve().parents[3] / "docs" / "cli.md"
#: Help is wrapped at this width, whatever the terminal, so the page is the same everywhere.
WIDTH = 100

HEADER = """\
# Command-line reference

Every command's `--help`, written by `python -m rubric.cli.docs` from the CLI itself (do not edit
by hand: `make lint` checks that this page is what the commands say). The manual explains the
method behind the commands: start at [docs/README.md](README.md).
"""


def _context(command: Any, name: str, parent: Any = None) -> Any:
    """The context ``--help`` of ``command`` is written in, at :data:`WIDTH` (Typer's own click
    classes: Typer ships a copy of click)."""
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    return command.context_class(command, info_name=name, parent=parent, **settings)


def _contexts(ctx: Any) -> Iterator[Any]:
    """``ctx`` and the context of every command below it, in the order ``--help`` lists them."""
    yield ctx
    group = ctx.command
    for name in group.list_commands(ctx) if hasattr(group, "list_commands") else []:
        sub = group.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            yield from _contexts(_context(sub, name, ctx))


def _anchor(path: str) -> str:
    """GitHub's anchor of a ``## path`` heading."""
    return path.lower().replace(" ", "-")


def _summary(command: Any) -> str:
    """A command's one-line summary, whole (the root's is its help's first line)."""
    return command.short_help or command.get_short_help_str(1000)


def render() -> str:
    """The whole page."""
    from rubric.cli.main import command

    contexts = list(_contexts(_context(command(), "rubric")))
    toc = [f"- [`{c.command_path}`](#{_anchor(c.command_path)}): {_summary(c.command)}" for c in contexts]
    sections = [f"## {c.command_path}\n\n```text\n{c.command.get_help(c).rstrip()}\n```\n" for c in contexts]
    return "\n".join([HEADER, *toc, "", *sections])


def main(argv: list[str] | None = None) -> int:
    """Write the page, or with ``--check`` say whether the committed one is current."""
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if args == ["--check"]:
        if PAGE.exists() and PAGE.read_text(encoding="utf-8") == text:
            return 0
        print(f"{PAGE} is out of date: run `python -m rubric.cli.docs`", file=sys.stderr)
        return 1
    if args:
        print("usage: python -m rubric.cli.docs [--check]", file=sys.stderr)
        return 2
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
