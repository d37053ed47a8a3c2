"""The one exception type for mistakes a user can cause.

The CLI turns a :class:`UserError` into a single line on stderr and exit code 2; anything else is
a bug and keeps its traceback. Library callers catch it like any exception.

A library function names its *parameters* in its errors, not the command's flags: a Python
caller never passed ``--workers``. The message marks each parameter as ``{name}`` and lists the
names (``UserError("{workers}: must be at least 0", "workers")``); ``str(error)`` spells them as
the library does (``workers``), and the CLI spells them as its flags (:meth:`UserError.spelled`
with the CLI's table, ``--workers``), so one message serves both.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar, cast

T = TypeVar("T")

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ALL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class UserError(Exception):
    """Bad input: a file, a line in it, or an option. The message says which and what is wrong.

    ``parameters`` are the names marked ``{name}`` in ``message`` (see the module docstring).
    """

    exit_code = 2

    def __init__(self, message: str, *parameters: str):
        super().__init__(message, *parameters)  # the arguments, so the error pickles (workers)
        self.template = message
        self.parameters = parameters

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The message with each marked parameter spelled by ``spell`` (the CLI: its flag)."""
        text = self.template
        for name in self.parameters:
            text = text.replace("{" + name + "}", spell(name))
        return text

    def __str__(self) -> str:
        return self.spelled(str)


def _named(option: str) -> tuple[str, tuple[str, ...]]:
    """``option`` as a message prefix: a flag (``--x``) as written, a parameter name marked."""
    return (option, ()) if option.startswith("-") else ("{" + option + "}", (option,))


def at_least(option: str, value: int | None, minimum: int) -> None:
    """An integer option below its minimum is a user error naming the option (a parameter name,
    which the CLI spells as its flag, or a flag)."""
    if value is not None and value < minimum:
        name, parameters = _named(option)
        raise UserError(f"{name}: must be at least {minimum}, got {value}", *parameters)


def one_of(option: str, value: str, choices: Sequence[str]) -> str:
    """A value outside an option's choices is a user error naming the option (a parameter name or
    a flag, as in :func:`at_least`) and every choice; checked by the library function that takes
    the value, before it reads any file."""
    if value not in choices:
        name, parameters = _named(option)
        raise UserError(f"{name}: expected one of {', '.join(choices)}, got {value!r}", *parameters)
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


def expected(parameter: str, what: str, value: object) -> UserError:
    """The one-line error for a library argument of the wrong kind, naming the parameter, what it
    takes and what it got (``{measures}: expected a name or an ir_measures measure, got int``)."""
    return UserError(f"{{{parameter}}}: expected {what}, got {type(value).__name__}", parameter)


#: The version that removes the keywords and spellings deprecated in this one.
REMOVAL = "0.3.0"


def renamed(old: str, new: str, old_value: object, new_value: T) -> T:
    """The value of keyword ``new``, given either as ``new`` or (deprecated: a
    :class:`DeprecationWarning` naming the removal version) as ``old``; both is an error."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise UserError(f"{{{old}}}, {{{new}}}: give {new} only ({old} is its old name)", old, new)
    warnings.warn(
        f"{old}= is deprecated and will be removed in rubric-workbench {REMOVAL}; use {new}=",
        DeprecationWarning,
        stacklevel=3,
    )
    return cast(T, old_value)  # the old keyword took what the new one takes
