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

import os
import signal
import sys
from typing import Annotated, Any

import typer

from rubric import __version__
from rubric.cli import bank, convert, evaluate, grade, prompts, verify
from rubric.cli.common import flag, guard_outputs, phase_app, show_log
from rubric.cli.renames import Spellings, modernize
from rubric.errors import UserError, printable

PHASES = {
    "convert": convert,
    "bank": bank,
    "grade": grade,
    "verify": verify,
    "evaluate": evaluate,
    "prompts": prompts,
}

app = phase_app(
    "Evaluate retrieval, generation and RAG systems with LLM-graded rubrics "
    "(RUBRIC / EXAM++ / AutoNuggetizer).\n\n"
    "Phases: convert -> bank -> grade -> verify / evaluate. Files are gzip JSON lines.",
    name="rubric",
    add_completion=True,  # --install-completion / --show-completion: options and their choices
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rubric-workbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Evaluate retrieval, generation and RAG systems with LLM-graded rubrics."""


def _register_phases() -> None:
    for phase, module in PHASES.items():
        for command in module.app.registered_commands:
            command.callback = guard_outputs(command.callback)
        app.add_typer(module.app, name=phase)


_register_phases()
# Each group's command names, for the rewrite of old option spellings.
COMMANDS = {phase: {c.name or "" for c in module.app.registered_commands} for phase, module in PHASES.items()}


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


def command() -> Any:
    """The click command of the app, with plain metavars and whole one-line summaries."""
    import typer.main

    from rubric.cli.common import plain_metavars

    return plain_metavars(typer.main.get_command(app))


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
        cli = command()
        args = modernize(sys.argv[1:], COMMANDS, options=lambda name: spellings(cli, name))
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
