"""The one exception type for mistakes a user can cause.

The CLI turns a :class:`UserError` into a single line on stderr and exit code 2; anything else is
a bug and keeps its traceback. Library callers catch it like any exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class UserError(Exception):
    """Bad input: a file, a line in it, or an option. The message says which and what is wrong."""

    exit_code = 2


def at_least(option: str, value: int | None, minimum: int) -> None:
    """An integer option below its minimum is a user error naming the option."""
    if value is not None and value < minimum:
        raise UserError(f"{option}: must be at least {minimum}, got {value}")


def one_of(option: str, value: str, choices: Sequence[str]) -> str:
    """A value outside an option's choices is a user error naming the option and every choice;
    checked by the library function that takes the value, before it reads any file."""
    if value not in choices:
        raise UserError(f"{option}: expected one of {', '.join(choices)}, got {value!r}")
    return value


def at(path: str | Path, line: int | None = None) -> str:
    """Render a location as ``file:line`` (or just ``file``) for error messages."""
    return f"{path}:{line}" if line is not None else str(path)
