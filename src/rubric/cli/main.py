"""Entry point of the ``rubric`` command.

Each phase group lives in its own module ``rubric.cli.<phase>`` exposing a Typer ``app``. Phase
modules import nothing heavy at import time (torch and transformers load inside the commands that
grade), which keeps ``rubric evaluate --help`` fast.

Every command is wrapped by :func:`~rubric.cli.common.guard_outputs` (an output naming an input
is refused before any work). Errors are one line: a :class:`UserError` or a command-line mistake
(a missing or out-of-range option) prints ``rubric: error: ...`` and exits with 2. Ctrl-C exits
with 130 and SIGTERM with 143, after the file being written is cleaned up. Old option spellings
are rewritten first (:mod:`rubric.cli.renames`), with a note on stderr.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Iterable
from functools import cache
from types import ModuleType
from typing import Annotated, Any

import typer

from rubric import __version__
from rubric.cli.common import flag, guard_outputs, phase_app, show_log
from rubric.cli.renames import Spellings, modernize
from rubric.errors import UserError, printable

#: The phase groups, in the order ``rubric --help`` lists them, and the modules that define them.
PHASE_MODULES = {
    "convert": "rubric.cli.convert",
    "bank": "rubric.cli.bank",
    "grade": "rubric.cli.grade",
    "verify": "rubric.cli.verify",
    "evaluate": "rubric.cli.evaluate",
    "prompts": "rubric.cli.prompts",
}
_SUMMARY = (
    "Evaluate retrieval, generation and RAG systems with LLM-graded rubrics "
    "(RUBRIC / EXAM++ / AutoNuggetizer).\n\n"
    "Phases: convert -> bank -> grade -> verify / evaluate. Files are gzip JSON lines."
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rubric-workbench {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Evaluate retrieval, generation and RAG systems with LLM-graded rubrics."""


@cache
def phase_module(phase: str) -> ModuleType:
    """The module of a phase group, imported once, its commands wrapped by
    :func:`~rubric.cli.common.guard_outputs`."""
    module = importlib.import_module(PHASE_MODULES[phase])
    for command in module.app.registered_commands:
        command.callback = guard_outputs(command.callback)
    return module


def build_app(phases: Iterable[str] = PHASE_MODULES) -> typer.Typer:
    """The ``rubric`` Typer app with these phase groups (all of them: the whole CLI)."""
    root = phase_app(
        _SUMMARY,
        name="rubric",
        add_completion=True,  # --install-completion / --show-completion: options and their choices
    )
    root.callback()(_root)
    for phase in phases:
        root.add_typer(phase_module(phase).app, name=phase)
    return root


def commands_of(phases: Iterable[str]) -> dict[str, set[str]]:
    """Each group's command names, for the rewrite of old option spellings."""
    return {p: {c.name or "" for c in phase_module(p).app.registered_commands} for p in phases}


def __getattr__(name: str) -> Any:
    """``app`` (the whole CLI), ``PHASES`` ({phase: module}) and ``COMMANDS``
    (:func:`commands_of` every phase), made when first asked for: a command line loads only its
    own phase (:func:`command`)."""
    if name == "app":
        return _whole_app()
    if name == "PHASES":
        return {phase: phase_module(phase) for phase in PHASE_MODULES}
    if name == "COMMANDS":
        return commands_of(PHASE_MODULES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _whole_app() -> typer.Typer:
    return build_app()


class Terminated(BaseException):
    """SIGTERM as an exception, so that ``finally`` blocks (temporary files) run before exit."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def _command_line_error(e: typer.TyperException) -> None:
    """A command-line mistake (unknown, missing or out-of-range option) as one ``rubric: error:``
    line and a hint where help is; a group called without a command shows its help."""
    if type(e).__name__ == "NoArgsIsHelpError":  # `rubric evaluate`
        e.show()  # type: ignore[attr-defined]
        sys.exit(UserError.exit_code)
    # a refused choice reads "Value error, 'xml' is not one of ...": the prefix says nothing
    print(f"rubric: error: {e.format_message().replace('Value error, ', '')}", file=sys.stderr)
    ctx = getattr(e, "ctx", None)
    if ctx is not None:
        print(f"Try '{ctx.command_path} -h' for help.", file=sys.stderr)
    sys.exit(UserError.exit_code if getattr(e, "exit_code", 2) == 2 else e.exit_code)


def _quiet_stdout() -> None:
    """After a closed pipe (`rubric ... | head`), let the interpreter exit without a flush error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def command(args: list[str] | None = None) -> Any:
    """The click command of the app, with plain metavars and whole one-line summaries. For a
    command line (``args``) that names a phase first, only that phase is loaded: the other
    phases' modules (and their options, about a third of a second of start-up together) are
    not imported."""
    import typer.main

    from rubric.cli.common import plain_metavars

    phases = phases_named(args)
    return plain_metavars(typer.main.get_command(build_app(phases) if phases else _whole_app()))


def phases_named(args: list[str] | None) -> list[str]:
    """The phase a command line names first, as a list (empty: none, so the whole CLI)."""
    return [args[0]] if args and args[0] in PHASE_MODULES else []


def spellings(cli: Any, name: tuple[str, str]) -> Spellings:
    """Every option spelling of the command ``name`` (group, command) of the click app ``cli``."""
    found: Spellings = {}
    for param in cli.commands[name[0]].commands[name[1]].params:
        takes_value = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
        for spelling in (*param.opts, *param.secondary_opts):
            if spelling.startswith("-"):
                found[spelling] = (param.name, takes_value)
    return found


def main() -> None:
    """Run the CLI; errors become one line on stderr and exit code 2 (see the module docstring)."""
    signal.signal(signal.SIGTERM, _terminate)
    show_log()
    try:
        cli = command(sys.argv[1:])
        commands = commands_of(phases_named(sys.argv[1:]) or PHASE_MODULES)
        args = modernize(sys.argv[1:], commands, options=lambda name: spellings(cli, name))
        code = cli(args=args, standalone_mode=False)
    except UserError as e:  # a message may quote a file: its control characters are shown, not run
        print(f"rubric: error: {printable(e.spelled(flag))}", file=sys.stderr)
        sys.exit(UserError.exit_code)
    except typer.TyperException as e:
        _command_line_error(e)
    except (KeyboardInterrupt, typer.Abort):
        code = 130
    except Terminated:
        print("rubric: terminated", file=sys.stderr)
        sys.exit(143)
    except RecursionError:  # the readers name the file; this is the net under them
        from rubric.data.json_line import TOO_DEEP

        print(f"rubric: error: an input is {TOO_DEEP}", file=sys.stderr)
        sys.exit(UserError.exit_code)
    except BrokenPipeError:  # `rubric ... | head`
        _quiet_stdout()
        sys.exit(0)
    if code == 130:
        print("rubric: interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)
