"""`rubric prompts`: list the grading prompts and show one, whole or rendered with example values."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rubric.cli.common import phase_app

app = phase_app("List the prompts (shipped and your own prompt files) and show one of them.")

PROMPT_FILE_HELP = "Your own prompt file (TOML, see docs/prompts.md); repeatable. Default: none."
PromptFiles = Annotated[list[Path], typer.Option("--prompt-file", help=PROMPT_FILE_HELP)]


@app.command("list")
def list_command(
    prompt_file: PromptFiles = None,
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind", help="Only prompts of this kind (question, nugget, direct, verify, ...). Default: all."
        ),
    ] = None,
) -> None:
    """Print every prompt: name, kind, answer parser and a one-line description.

    Example: rubric prompts list --kind direct
    """
    from rubric.prompting.catalog import listing

    for line in listing(prompt_file, kind):
        typer.echo(line)


@app.command("show")
def show_command(
    name: Annotated[
        str, typer.Argument(help="Prompt name (e.g. NuggetSelfRatedPrompt), alias or .toml path.")
    ],
    prompt_file: PromptFiles = None,
    example: Annotated[
        bool,
        typer.Option(
            "--example", "-e", help="Also print the prompt filled with example values. Default: off."
        ),
    ] = False,
    values: Annotated[
        list[str],
        typer.Option(
            "--set",
            help="With --example: a placeholder value, NAME=TEXT (repeatable), e.g. --set "
            "'question=Who wrote Hamlet?'. Default: built-in example values.",
        ),
    ] = None,
) -> None:
    """Print a prompt file as it is (template with {placeholders}), optionally rendered.

    The rendered example is the exact text a model receives (before the context is truncated to
    the model's input length).

    Example: rubric prompts show QuestionSelfRatedUnanswerablePromptWithChoices --example
    """
    from rubric.prompting.catalog import show

    typer.echo(show(name, prompt_file, with_example=example, values=values), nl=False)
