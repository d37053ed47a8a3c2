"""Helpers shared by the phase CLIs: typer app factory and messages on stderr."""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def phase_app(help_text: str) -> typer.Typer:
    """A Typer group with the conventions of every phase (no completion, -h, plain help)."""
    return typer.Typer(
        help=help_text,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


def info(message: str) -> None:
    """Progress and summaries go to stderr; stdout is for results."""
    print(message, file=sys.stderr, flush=True)


def emit(text: str, output: Path | None) -> None:
    """Results go to ``-o`` (written atomically, then named on stderr) or stdout."""
    if output is None:
        typer.echo(text, nl=False)
        return
    from rubric.data.files import atomic_write

    with atomic_write(output) as f:
        f.write(text)
    info(f"wrote {output}")
