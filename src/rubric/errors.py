"""The one exception type for mistakes a user can cause.

The CLI turns a :class:`UserError` into a single line on stderr and exit code 2; anything else is
a bug and keeps its traceback. Library callers catch it like any exception.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ALL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


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


def printable(text: str, *, lines: bool = True) -> str:
    """``text`` safe for a terminal: control characters from files (an escape sequence that
    would recolour or clear the screen, a carriage return that hides what came before) shown as
    ``\\x1b``, ``\\r``; newlines and tabs kept, or (``lines=False``, one field of one line)
    shown as ``\\n`` and ``\\t`` too."""
    pattern = _CONTROL if lines else _ALL_CONTROL
    return pattern.sub(lambda m: repr(m.group())[1:-1], text)
