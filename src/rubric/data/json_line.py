"""One line of a JSON-lines file: parsed, or a :class:`UserError` naming file:line and field.

The lowest layer of the readers: :mod:`rubric.data.jsonl` (records) and :mod:`rubric.data.graded`
(passages files, streamed by query) both build on it, so neither needs the other for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rubric.errors import UserError


def describe_validation_error(e: ValidationError, prefix: str = "") -> str:
    """The first problem of a pydantic error as ``field.path: message``."""
    err = e.errors()[0]
    loc = prefix
    for part in err["loc"]:
        if isinstance(part, int):
            loc += f"[{part}]"
        else:
            loc += f".{part}" if loc else str(part)
    return f"{loc or 'record'}: {err['msg']}"


def not_json(name: str) -> Any:
    """``json.loads`` accepts ``NaN`` and ``Infinity``; they are not JSON, and no score is either."""
    raise ValueError(f"{name} is not a JSON number")


TOO_DEEP = "JSON nested too deeply (arrays and objects within each other, hundreds of levels)"


def load_json(where: str, text: str, **options: Any) -> Any:
    """``json.loads(text)``; nesting deeper than Python's parser takes (a hostile or broken file)
    is a :class:`UserError` at ``where`` instead of a ``RecursionError``. Other errors pass."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise UserError(f"{where}: {TOO_DEEP}") from None


def id_text(where: str, name: str, value: Any) -> str:
    """An id read from JSON: a string, or a whole number written as its digits (as before); null,
    a list, an object, a boolean or a fraction would become a made-up id ("None", "['q1']")."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    shown = json.dumps(value)[:40] if not isinstance(value, float) else repr(value)
    raise UserError(f"{where}: {name} must be a string, got {shown}")


def parse_json_line(path: str | Path, line_no: int, line: str) -> Any:
    """One line of a JSON-lines file; ``NaN``/``Infinity``, broken JSON and nesting too deep are
    errors at file:line."""
    try:
        return load_json(f"{path}:{line_no}", line, parse_constant=not_json)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{line_no}: not valid JSON ({e.msg}, column {e.colno})") from None
    except ValueError as e:
        raise UserError(f"{path}:{line_no}: not valid JSON ({e})") from None
