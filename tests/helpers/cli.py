"""The ``rubric`` command for tests: in-process (fast, most tests) or as a real subprocess.

A subprocess costs 0.3-0.4 s of interpreter start and imports per call, and about 2 s more when
the command loads torch; :func:`run_cli` instead calls the console entry point
(``rubric.cli.main:main``) in this process, so the exit-code mapping is the real one (``UserError``
and command-line mistakes exit 2, Ctrl-C 130, a bug 1 with its traceback on stderr). What a new
process would start with is set up around the call and put back afterwards: ``sys.argv``, the
standard streams (``input`` becomes standard input), the environment, the working directory,
signal handlers, torch's thread count, the ``rubric`` logger's handlers and the record of
standard input already read.

What an in-process run cannot show stays a subprocess (:func:`run_cli_subprocess`, tests marked
``subprocess``): signals and kills, resuming after a kill, pipes, fifos and ``/dev/fd/1``, the
``rubric`` console script itself, and which modules a fresh interpreter imports.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import signal
import subprocess
import sys
import traceback
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from helpers import ROOT

TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Completed:
    """What :func:`subprocess.run` would return: the arguments, exit code and captured output
    (``str`` in text mode, else ``bytes``)."""

    args: list[str]
    returncode: int
    stdout: str | bytes
    stderr: str | bytes


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for CLI subprocesses: this checkout's sources first, one torch thread."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.update(extra or {})
    return env


def sigint_as_on_a_terminal() -> None:
    """``preexec_fn`` of a child that a test sends Ctrl-C: SIGINT at its default, as a shell gives
    a foreground command. A runner started in the background without job control (``make test &``
    in a script) passes SIGINT on as ignored, and a Python started so keeps ignoring it, rightly."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def assert_no_traceback(stderr: str | bytes, args: object = ()) -> None:
    """Whatever the input, the CLI never shows a traceback: every CLI call of the suite checks it."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    assert TRACEBACK not in stderr, f"rubric {args}:\n{stderr[-4000:]}"


def run_cli(
    *args: object,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | bytes | None = None,
    stdin: IO | None = None,
    text: bool = True,
    timeout: float | None = None,
) -> Completed:
    """Run ``rubric ARGS`` in this process and return its :class:`Completed`; a traceback on
    stderr fails the test. ``env`` adds to (and afterwards leaves) the environment; ``input`` is
    standard input (empty if not given), ``stdin`` an open file to read it from instead.
    ``timeout`` is accepted for the subprocess runner's signature and ignored."""
    result = invoke([str(a) for a in args], cwd=cwd, env=env, input=input, stdin=stdin, text=text)
    assert_no_traceback(result.stderr, args)
    return result


def run_cli_subprocess(
    *args: object,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | bytes | None = None,
    stdin: IO | None = None,
    text: bool = True,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """Run ``python -m rubric ARGS`` as a child process; a traceback on stderr fails the test."""
    result = subprocess.run(
        [sys.executable, "-m", "rubric", *map(str, args)],
        input=input,
        stdin=stdin,
        capture_output=True,
        text=text,
        cwd=cwd,
        env=cli_env(env),
        timeout=timeout,
    )
    assert_no_traceback(result.stderr, args)
    return result


class _Capture(io.BytesIO):
    """A standard stream's bytes; stays readable after the command closes its stream."""

    def close(self) -> None:
        self.flush()


def invoke(
    argv: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | bytes | None = None,
    stdin: IO | None = None,
    text: bool = True,
) -> Completed:
    """Call ``rubric.cli.main.main()`` as the console script would, with a fresh process's
    state around it (see the module docstring); no checks."""
    from rubric.cli import main as cli

    out, err = _Capture(), _Capture()
    if stdin is not None:
        source: IO[bytes] = open(os.dup(stdin.fileno()), "rb")
    else:
        source = io.BytesIO(input.encode() if isinstance(input, str) else (input or b""))
    streams = (
        io.TextIOWrapper(source, encoding="utf-8"),
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    code = 0
    with _fresh_process(argv, streams, cwd, env):
        try:
            cli.main()
        except SystemExit as e:
            code = _exit_status(e.code)
        except BaseException:  # what the interpreter does with an uncaught exception
            traceback.print_exc(file=sys.stderr)
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    source.close()
    stdout, stderr = out.getvalue(), err.getvalue()
    if text:
        return Completed(argv, code, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"))
    return Completed(argv, code, stdout, stderr)


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message")
    return 1


@contextlib.contextmanager
def _fresh_process(
    argv: list[str], streams: tuple, cwd: Path | None, env: dict[str, str] | None
) -> Iterator[None]:
    from rubric.data import files

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_std = (sys.stdin, sys.stdout, sys.stderr)
    saved_argv, saved_main = sys.argv, sys.modules["__main__"]
    saved_signals = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    # click names the program after ``__main__`` and argv[0]: "python -m rubric", as in a child
    main = types.ModuleType("__main__")
    main.__package__ = "rubric"
    main.__spec__ = importlib.util.find_spec("rubric.__main__")
    files._consumed.clear()  # standard input and pipes read by an earlier command
    logger = logging.getLogger("rubric")  # the command shows it on stderr (cli.common.show_log)
    saved_logger = (list(logger.handlers), logger.level, logger.propagate)
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = [str(ROOT / "src" / "rubric" / "__main__.py"), *argv]
        sys.modules["__main__"] = main
        sys.stdin, sys.stdout, sys.stderr = streams
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_std
        sys.argv = saved_argv
        sys.modules["__main__"] = saved_main
        os.chdir(saved_cwd)
        for name in set(os.environ) - set(saved_env):
            del os.environ[name]
        os.environ.update(saved_env)
        for sig, handler in saved_signals.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(sig, handler)
        if threads is not None:
            torch.set_num_threads(threads)
        elif "torch" in sys.modules:  # the command loaded torch: one thread, as OMP_NUM_THREADS says
            sys.modules["torch"].set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        files._consumed.clear()
        logger.handlers[:], logger.level, logger.propagate = saved_logger


def assert_user_error(result, *fragments: str) -> None:
    """Exit code 2, one line on stderr naming what is wrong, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "Traceback" not in err, err
    assert err.startswith("rubric: error:"), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
