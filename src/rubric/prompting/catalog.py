"""The prompts as a user browses them (`rubric prompts`): a listing, and a prompt filled with
example values, which is the exact text a model receives (before the context is truncated)."""

from __future__ import annotations

from pathlib import Path

from rubric.errors import UserError
from rubric.prompting.prompts import Prompt, get_prompt, load_prompt_file, prompts_dir, shipped_prompts

#: Values for examples: a DL-style query, exam question, nugget and passage.
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


def all_prompts(prompt_files: list[Path] | None = None) -> dict[str, Prompt]:
    """Shipped prompts, then the user's files (a user's file replaces a shipped prompt of its name)."""
    prompts = dict(shipped_prompts())
    for f in prompt_files or []:
        p = load_prompt_file(f)
        prompts[p.name] = p
    return prompts


def describe(p: Prompt) -> str:
    """A prompt's description, its aliases and (for a user's prompt) its file."""
    text = p.description
    if p.aliases:
        text += f" (also: {', '.join(p.aliases)})"
    if p.path is not None and p.path.resolve().parent != prompts_dir().resolve():
        text += f" [{p.path}]"
    return text


def listing(prompt_files: list[Path] | None = None, kind: str | None = None) -> list[str]:
    """Aligned lines ``NAME KIND PARSER DESCRIPTION`` of every prompt (of ``kind``), by kind and name."""
    prompts = all_prompts(prompt_files)
    rows = [p for p in prompts.values() if kind is None or p.kind == kind]
    if not rows:
        kinds = sorted({p.kind for p in prompts.values()})
        raise UserError(f"{{kind}}: no prompt of kind {kind!r}; kinds: {', '.join(kinds)}", "kind")
    rows.sort(key=lambda p: (p.kind, p.name))
    table = [("NAME", "KIND", "PARSER", "DESCRIPTION")] + [
        (p.name, p.kind, p.parser, describe(p)) for p in rows
    ]
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    return ["  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3] for r in table]


def example(prompt: Prompt, values: list[str] | None = None) -> str:
    """The prompt filled with example values; ``values`` (``NAME=TEXT``) replace some of them."""
    filled = dict(EXAMPLE_VALUES)
    for item in values or []:
        key, sep, text = item.partition("=")
        if not sep or key not in prompt.placeholders:
            raise UserError(
                f"{{values}}: expected NAME=TEXT with NAME one of {', '.join(prompt.placeholders)}, "
                f"got {item!r}",
                "values",
            )
        filled[key] = text
    return prompt.render(**{k: filled[k] for k in prompt.placeholders if k in filled})


def show(
    name: str,
    prompt_files: list[Path] | None = None,
    *,
    with_example: bool = False,
    values: list[str] | None = None,
) -> str:
    """`rubric prompts show`: the prompt file as it is (template with ``{placeholders}``) and,
    ``with_example``, the prompt filled with example values (``values`` replace some of them)
    and its valid answers: the exact text a model receives, before the context is cut to the
    model's input length.

    A bad ``--set`` fails before any output.
    """
    if values and not with_example:
        raise UserError("{values}: only meaningful with {with_example}", "values", "with_example")
    prompt = get_prompt(name, prompt_files, option="NAME")
    rendered = example(prompt, values) if with_example else ""
    assert prompt.path is not None  # every loaded prompt comes from a file
    text = prompt.path.read_text(encoding="utf-8")
    if not with_example:
        return text
    text += "\n# ---- rendered example " + "-" * 48 + "\n" + rendered + "\n"
    if prompt.choices:
        text += f"# ---- valid answers: {', '.join(prompt.choices)}\n"
    return text
