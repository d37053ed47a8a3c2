"""Entry point of the ``rubric`` command.

Each phase group lives in its own module ``rubric.cli.<phase>`` exposing a Typer ``app``; a group
is listed only if its module exists, so ``--help`` shows exactly what is built. Phase modules
import nothing heavy at import time (torch and transformers load inside the commands that grade),
which keeps ``rubric evaluate --help`` fast.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from rubric import __version__
from rubric.errors import UserError

PHASES = ("convert", "bank", "grade", "verify", "evaluate", "prompts")

app = typer.Typer(
    name="rubric",
    help=(
        "Evaluate retrieval, generation and RAG systems with LLM-graded rubrics "
        "(RUBRIC / EXAM++ / AutoNuggetizer).\n\n"
        "Phases: convert -> bank -> grade -> verify / evaluate. Files are gzip JSON lines."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rubric-workbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate retrieval, generation and RAG systems with LLM-graded rubrics."""


def _register_phases() -> None:
    for phase in PHASES:
        if importlib.util.find_spec(f"rubric.cli.{phase}") is None:
            continue
        module = importlib.import_module(f"rubric.cli.{phase}")
        app.add_typer(module.app, name=phase)


_register_phases()


def main() -> None:
    """Run the CLI; a :class:`UserError` becomes one line on stderr and exit code 2."""
    try:
        app()
    except UserError as e:
        print(f"rubric: error: {e}", file=sys.stderr)
        sys.exit(UserError.exit_code)
    except KeyboardInterrupt:
        print("rubric: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # `rubric ... | head`
        sys.exit(0)
