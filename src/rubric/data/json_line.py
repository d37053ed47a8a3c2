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


def _not_json(name: str) -> Any:
    """``json.loads`` accepts ``NaN`` and ``Infinity``; they are not JSON, and no score is either."""
    raise ValueError(f"{name} is not a JSON number")


def parse_json_line(path: str | Path, line_no: int, line: str) -> Any:
    """One line of a JSON-lines file; ``NaN``/``Infinity`` and broken JSON are errors at file:line."""
    try:
        return json.loads(line, parse_constant=_not_json)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{line_no}: not valid JSON ({e.msg}, column {e.colno})") from None
    except ValueError as e:
        raise UserError(f"{path}:{line_no}: not valid JSON ({e})") from None
