"""Helpers shared by the phase CLIs: typer app factory and messages on stderr."""

from __future__ import annotations

import sys

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
