"""Helpers shared by the phase CLIs: typer app factory, messages on stderr, the output guard."""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup


class Writes:
    """Marks a path parameter as a file the command writes (see :func:`is_output`)."""


WRITES = Writes()
# The type of a parameter that names a file the command writes; every other path is an input.
OutputPath = Annotated[Path, WRITES]
OptionalOutputPath = Annotated[Path | None, WRITES]


class DefaultCommandGroup(TyperGroup):
    """The ``grade`` group: a first argument that names no subcommand belongs to ``exam`` (here,
    not in cli/grade.py, so that the rewrite of old spellings knows it without loading grade)."""

    default_command = "exam"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


def is_output(hint: Any) -> bool:
    """Whether a parameter's type (with its ``Annotated`` extras) declares a written file."""
    return typing.get_origin(hint) is Annotated and any(isinstance(m, Writes) for m in hint.__metadata__)


#: Library parameters whose command-line option is not ``--`` and the name with dashes. One name
#: is one option in every command (tests/test_errors.py checks each marked name is an option);
#: a name that would mean two options is marked otherwise (``items_per_query``, ``per_facet``).
FLAGS = {
    "output": "-o",
    "measures": "-m",
    "prompts": "--prompt",
    "prompt_files": "--prompt-file",
    "prompt_classes": "--prompt-class",
    "fmt": "--format",
    "runs": "--run",
    "levels": "--level",
    "queries": "--topics",  # the query texts; the subset filter is query / queries_file
    "queries_file": "--queries",
    "llm_qrels": "--qrels",
    "human_qrels": "--human",
    "facet_bank": "--bank",
    "sweep_grid": "--sweep",
    "mapping": "--map",
    "as_": "--as",
    "values": "--set",
    "with_example": "--example",
    "compile_encoder": "--compile",
    "feature_set": "--features",
    "method": "--classifier",
}


def flag(parameter: str) -> str:
    """The command-line option of a library parameter (``checkpoint_pairs`` ->
    ``--checkpoint-pairs``): library errors name parameters, the CLI prints its options
    (:meth:`rubric.errors.UserError.spelled`)."""
    return FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def phase_app(help_text: str, **settings: Any) -> typer.Typer:
    """A Typer group with the conventions of every phase (-h, plain help; the root app adds shell
    completion with ``add_completion=True``)."""
    settings.setdefault("add_completion", False)
    return typer.Typer(
        **settings,
        help=help_text,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


def info(message: str) -> None:
    """Progress and summaries go to stderr; stdout is for results."""
    print(message, file=sys.stderr, flush=True)


class _Stderr(logging.Handler):
    """The ``rubric`` logger's messages as the command's stderr lines: notes as they are,
    warnings marked ``rubric: warning:``. ``sys.stderr`` is looked up per message, so a
    redirected stderr (a test, a wrapper) gets them."""

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        info(text if record.levelno < logging.WARNING else f"rubric: warning: {text}")


def show_log() -> None:
    """The library logs to the ``rubric`` logger (:mod:`logging`) and never prints; the command
    shows its notes and warnings on stderr. Called once per run; a second call changes nothing."""
    logger = logging.getLogger("rubric")
    if not any(isinstance(h, _Stderr) for h in logger.handlers):
        logger.addHandler(_Stderr())
    logger.setLevel(logging.INFO)
    logger.propagate = False  # not twice when the caller configured the root logger


def emit(text: str, output: Path | None) -> None:
    """Results go to ``-o`` (by the output rule: ``-`` is stdout, files are replaced atomically)
    or stdout; a written file is named on stderr."""
    from rubric.data.files import is_stdio, write_output

    write_output(output, text)
    if output is not None and not is_stdio(output):
        info(f"wrote {output}")


def _label(parameter: inspect.Parameter, hint: Any) -> str:
    """How the command line names a parameter: its first long option, or its argument name."""
    decls = getattr(parameter.default, "param_decls", None) or ()
    for info_ in getattr(hint, "__metadata__", ()):  # Annotated[..., typer.Option("--name", ...)]
        if isinstance(getattr(info_, "default", None), str):
            decls = (info_.default, *(info_.param_decls or ()))
    longs = [d for d in decls if d.startswith("--")]
    if longs:
        return longs[0]
    return decls[0] if decls else (getattr(parameter.default, "metavar", None) or parameter.name.upper())


def _paths(value: Any) -> list[Path]:
    values = value if isinstance(value, list | tuple) else [value]
    return [v for v in values if isinstance(v, Path)]


def _named_paths(value: Any) -> list[Path]:
    """Existing files an input names: the text itself, or the PATH of NAME=PATH (``--run
    bm25=a.run``, ``evaluate meta`` tables), whether the option takes text or paths. Any option
    may name a file as text; what exists on disk counts."""
    import os

    values = value if isinstance(value, list | tuple) else [value]
    found: list[Path] = []
    for v in values:
        v = str(v) if isinstance(v, Path) else v
        if not isinstance(v, str) or not v or "\0" in v:
            continue
        for candidate in (v, v.partition("=")[2]):
            if candidate and os.path.lexists(candidate):
                found.append(Path(candidate))
    return found


def updates_in_place(parameter: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a command whose output is a new version of its input ``parameter`` (grading adds
    grades to a passages file, `bank edit` edits a bank), so ``-o`` may name that input: the
    command reads it completely before the output replaces it."""

    def mark(command: Callable[..., Any]) -> Callable[..., Any]:
        command.updates_in_place = parameter  # type: ignore[attr-defined]
        return command

    return mark


def guard_outputs(command: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command so that, before it does any work, an output (a parameter typed
    :data:`~rubric.cli.options.OutputPath`) that is one of its input files (or another of its
    outputs) is refused with exit code 2: writing it would replace the input.
    Only the input named by :func:`updates_in_place` may be the output. Inputs are the path
    parameters and the existing files that text parameters name (:func:`_named_paths`); an
    output that cannot be written (a folder, a read-only folder) is refused too.
    A command with several outputs writes them together: all or none. The rule itself is the
    library's (:func:`rubric.data.files.guarded_outputs`, which ``rubric.grade`` applies too);
    this wrapper only finds a command's inputs and outputs in its parameters.

    Applied to every command by :mod:`rubric.cli.main`, so no command can forget it.
    """
    signature = inspect.signature(command)
    hints = typing.get_type_hints(command, include_extras=True)
    in_place = getattr(command, "updates_in_place", None)

    @functools.wraps(command)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        from rubric.data.files import guarded_outputs

        values = signature.bind_partial(*args, **kwargs).arguments
        inputs: list[tuple[str, Path]] = []
        outputs: list[tuple[str, Path]] = []
        for name, value in values.items():
            if name == in_place:
                continue
            hint = hints.get(name)
            label = _label(signature.parameters[name], hint)
            if is_output(hint):
                outputs.extend((label, p) for p in _paths(value))
            else:
                inputs.extend((label, p) for p in [*_paths(value), *_named_paths(value)])
        with guarded_outputs(outputs, inputs):
            return command(*args, **kwargs)

    return guarded


def plain_metavars(command: Any) -> Any:
    """Give every option and argument of a click command tree a plain metavar, as Unix help
    writes them (``--queries FILE``, ``--batch-size N``, ``--prompt PROMPT``, ``PASSAGES``),
    instead of Typer's Python types (``<path>``, ``<list[str]>``); metavars set by hand stay.
    Each command's one-line summary in its group's list is its docstring's first sentence,
    whole (click cuts it at the terminal width with "...")."""
    import click

    for param in command.params:
        if (
            param.metavar is None
            and not getattr(param, "is_flag", False)
            and not getattr(param, "count", False)
        ):
            param.metavar = _metavar(param, click)
        if param.param_type_name == "argument":
            param.display_type_rich = lambda ctx: None  # the metavar says it; no <type> after it
    for sub in getattr(command, "commands", {}).values():
        if sub.short_help is None and sub.help:
            sub.short_help = _first_sentence(sub.help)
        plain_metavars(sub)
    return command


def _metavar(param: Any, click: Any) -> str | None:
    """FILE, N, NUMBER, or the option's name for text; None (Typer's list) for a choice."""
    if param.param_type_name == "argument":
        return param.name.upper()
    kind = _kind(param, click)
    if kind == "choice":
        return None
    if kind in ("path", "int", "float"):
        return {"path": "FILE", "int": "N", "float": "NUMBER"}[kind]
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs[0][2:] if longs else param.name).upper().replace("-", "_")


def _kind(param: Any, click: Any) -> str:
    """What a parameter takes: from Typer's type descriptor (Typer >= 0.20) or click's type."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        if descriptor.is_choice:
            return "choice"
        if descriptor.is_path:
            return "path"
        annotation = descriptor.annotation
        element = typing.get_args(annotation)[0] if descriptor.is_list else annotation
        if isinstance(element, type) and issubclass(element, Path):
            return "path"
        return {int: "int", float: "float"}.get(element, "text")
    kind = getattr(param, "type", None)
    if isinstance(kind, click.Choice):
        return "choice"
    if isinstance(kind, click.Path):
        return "path"
    return {click.INT: "int", click.FLOAT: "float"}.get(kind, "text")


def _first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph (a summary line)."""
    paragraph = " ".join(inspect.cleandoc(text).split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[: end + 1]
