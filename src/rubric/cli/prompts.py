"""`rubric prompts`: list the grading prompts and show one, whole or rendered with example values."""

from __future__ import annotations

from pathlib import Path

import typer

from rubric.cli.common import phase_app

app = phase_app("List the prompts (shipped and your own prompt files) and show one of them.")

#: Values for `show --example`: a DL-style query, exam question, nugget and passage.
EXAMPLE_VALUES = {
    "query": "how do plants make food",
    "question": "Which gas do plants take in to make sugar?",
    "nugget": "carbon dioxide absorbed",
    "context": "Plants make their food by photosynthesis: their leaves take in carbon dioxide from the air "
    "and water from the soil and, using the energy of sunlight, turn them into sugar and oxygen.",
    "answer": "CO2",
    "gold_answers": "carbon dioxide",
    "facet": "photosynthesis",
    "per_query": "10",
    "count": "10",
    "nuggets": '["carbon dioxide absorbed", "sunlight provides energy"]',
    "items": '["carbon dioxide absorbed", "sunlight provides energy"]',
    "passages": "[1] Plants make their food by photosynthesis.",
}

PROMPT_FILE_HELP = "Your own prompt file (TOML, see README); repeatable. Default: none."


def _prompts(prompt_files: list[Path] | None):
    """Shipped prompts, then the user's files (a user's file replaces a shipped prompt of its name)."""
    from rubric.grading.prompts import load_prompt_file, shipped_prompts

    prompts = dict(shipped_prompts())
    for f in prompt_files or []:
        p = load_prompt_file(f)
        prompts[p.name] = p
    return prompts


@app.command("list")
def list_command(
    prompt_file: list[Path] = typer.Option(None, "--prompt-file", "-p", help=PROMPT_FILE_HELP),
    kind: str | None = typer.Option(
        None,
        "--kind",
        "-k",
        help="Only prompts of this kind (question, nugget, direct, verify, ...). Default: all.",
    ),
) -> None:
    """Print every prompt: name, kind, answer parser and a one-line description.

    Example: rubric prompts list --kind direct
    """
    from rubric.errors import UserError

    prompts = _prompts(prompt_file)
    rows = [p for p in prompts.values() if kind is None or p.kind == kind]
    if not rows:
        kinds = sorted({p.kind for p in prompts.values()})
        raise UserError(f"--kind: no prompt of kind {kind!r}; kinds: {', '.join(kinds)}")
    rows.sort(key=lambda p: (p.kind, p.name))
    header = ("NAME", "KIND", "PARSER", "DESCRIPTION")
    table = [header] + [(p.name, p.kind, p.parser, _describe(p)) for p in rows]
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    for r in table:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3])


def _describe(p) -> str:
    text = p.description
    if p.aliases:
        text += f" (also: {', '.join(p.aliases)})"
    if p.path is not None and not _is_shipped(p.path):
        text += f" [{p.path}]"
    return text


def _is_shipped(path: Path) -> bool:
    from rubric.grading.prompts import prompts_dir

    return path.resolve().parent == prompts_dir().resolve()


@app.command("show")
def show_command(
    name: str = typer.Argument(..., help="Prompt name (e.g. NuggetSelfRatedPrompt), alias or .toml path."),
    prompt_file: list[Path] = typer.Option(None, "--prompt-file", "-p", help=PROMPT_FILE_HELP),
    example: bool = typer.Option(
        False, "--example", "-e", help="Also print the prompt filled with example values. Default: off."
    ),
    values: list[str] = typer.Option(
        None,
        "--set",
        help="With --example: a placeholder value, NAME=TEXT (repeatable), e.g. --set "
        "'question=Who wrote Hamlet?'. Default: built-in example values.",
    ),
) -> None:
    """Print a prompt file as it is (template with {placeholders}), optionally rendered.

    The rendered example is the exact text a model receives (before the context is truncated to
    the model's input length).

    Example: rubric prompts show QuestionSelfRatedUnanswerablePromptWithChoices --example
    """
    from rubric.errors import UserError
    from rubric.grading.prompts import get_prompt

    if values and not example:
        raise UserError("--set: only meaningful with --example")
    prompt = get_prompt(name, prompt_file, option="NAME")
    filled = dict(EXAMPLE_VALUES)
    for item in values or []:
        key, sep, text = item.partition("=")
        if not sep or key not in prompt.placeholders:
            raise UserError(
                f"--set: expected NAME=TEXT with NAME one of {', '.join(prompt.placeholders)}, got {item!r}"
            )
        filled[key] = text
    assert prompt.path is not None  # every loaded prompt comes from a file
    typer.echo(prompt.path.read_text(encoding="utf-8"), nl=False)
    if not example:
        return
    typer.echo("\n# ---- rendered example " + "-" * 48)
    typer.echo(prompt.render(**{k: filled[k] for k in prompt.placeholders if k in filled}))
    if prompt.choices:
        typer.echo(f"# ---- valid answers: {', '.join(prompt.choices)}")
