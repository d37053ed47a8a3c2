"""Streaming JSON-lines files (plain or gzip) with errors that name the file, line and field.

Readers yield one parsed record per line and never skip a line silently: a broken line, a
truncated gzip stream or a record that fails validation is a :class:`UserError` such as
``passages.jsonl.gz:17: paragraphs[3].paragraph_id: Field required``. Writers are atomic.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rubric.data.files import atomic_write, open_text
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList, TestBank
from rubric.errors import UserError

T = TypeVar("T")


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


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed_json)`` for every non-blank line of a JSONL file."""
    with open_text(path) as f:
        line_no = 0
        for line_no, line in enumerate(f, start=1):  # noqa: B007 - line_no is used after the loop
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{line_no}: not valid JSON ({e.msg}, column {e.colno})") from None


def read_models(path: str | Path, parse: Callable[[Any], T]) -> Iterator[T]:
    """Yield ``parse(json)`` per line; validation errors are reported with file:line."""
    for line_no, obj in iter_json_lines(path):
        try:
            yield parse(obj)
        except ValidationError as e:
            raise UserError(f"{path}:{line_no}: {describe_validation_error(e)}") from None
        except (TypeError, ValueError) as e:
            raise UserError(f"{path}:{line_no}: {e}") from None


def write_json_lines(path: str | Path, records: Iterable[Any]) -> int:
    """Atomically write one JSON value per line; models are dumped with :meth:`to_json`."""
    n = 0
    with atomic_write(path) as f:
        for rec in records:
            obj = rec.to_json() if hasattr(rec, "to_json") else rec
            f.write(json.dumps(obj, ensure_ascii=False))
            f.write("\n")
            n += 1
    return n


# --- the passages interchange file -----------------------------------------------------------


def parse_query_line(obj: Any) -> QueryWithFullParagraphList:
    """Validate ``["qid", [FullParagraphData, ...]]``; errors locate the paragraph and field."""
    if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[1], list)):
        raise ValueError('expected a JSON array ["query_id", [passage, ...]]')
    qid, paragraphs = obj
    parsed = []
    for i, p in enumerate(paragraphs):
        try:
            parsed.append(FullParagraphData.model_validate(p))
        except ValidationError as e:
            raise ValueError(describe_validation_error(e, prefix=f"paragraphs[{i}]")) from None
    return QueryWithFullParagraphList(queryId=str(qid), paragraphs=parsed)


def read_passages(path: str | Path) -> Iterator[QueryWithFullParagraphList]:
    """Stream the passages file one query at a time."""
    return read_models(path, parse_query_line)


def write_passages(path: str | Path, queries: Iterable[QueryWithFullParagraphList]) -> int:
    return write_json_lines(path, queries)


# --- test banks --------------------------------------------------------------------------------


def read_bank(path: str | Path) -> Iterator[TestBank]:
    """Stream a test bank, one :class:`TestBank` (query or facet) per line."""
    return read_models(path, TestBank.model_validate)


def write_bank(path: str | Path, banks: Iterable[TestBank]) -> int:
    return write_json_lines(path, banks)


def read_model_lines(path: str | Path, model: type[BaseModel]) -> Iterator[BaseModel]:
    """Stream any one-object-per-line file as ``model`` instances."""
    return read_models(path, model.model_validate)
