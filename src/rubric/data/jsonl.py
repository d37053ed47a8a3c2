"""Streaming JSON-lines files (plain or gzip) with errors that name the file, line and field.

Readers yield one parsed record per line and never skip a line silently: a broken line, a
truncated gzip stream or a record that fails validation is a :class:`UserError` such as
``passages.jsonl.gz:17: paragraphs[3].paragraph_id: Field required``. ``NaN`` and ``Infinity``
are not JSON and are refused. Repeated ids are never silently dropped: lines of one query in a
passages file are merged (the original workbench writes some files one passage per line), a
passage twice in one query or a bank twice for one query (facet) is an error naming both lines.
Writers follow the output rule of :mod:`rubric.data.files`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rubric.data.files import iter_lines, open_output
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


def _not_json(name: str) -> Any:
    """``json.loads`` accepts ``NaN`` and ``Infinity``; they are not JSON, and no score is either."""
    raise ValueError(f"{name} is not a JSON number")


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed_json)`` for every non-blank line of a JSONL file."""
    for line_no, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=_not_json)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{line_no}: not valid JSON ({e.msg}, column {e.colno})") from None
        except ValueError as e:
            raise UserError(f"{path}:{line_no}: not valid JSON ({e})") from None
        yield line_no, obj


def parse_lines(
    path: str | Path, lines: Iterable[tuple[int, Any]], parse: Callable[[Any], T]
) -> Iterator[tuple[int, T]]:
    """``(line_number, parse(json))`` per line; validation errors are reported with file:line."""
    for line_no, obj in lines:
        try:
            yield line_no, parse(obj)
        except ValidationError as e:
            raise UserError(f"{path}:{line_no}: {describe_validation_error(e)}") from None
        except (TypeError, ValueError) as e:
            raise UserError(f"{path}:{line_no}: {e}") from None


def read_models(path: str | Path, parse: Callable[[Any], T]) -> Iterator[T]:
    """Yield ``parse(json)`` per line; validation errors are reported with file:line."""
    for _, model in parse_lines(path, iter_json_lines(path), parse):
        yield model


def write_json_lines(path: str | Path, records: Iterable[Any]) -> int:
    """Write one JSON value per line (output rule); models are dumped with :meth:`to_json`."""
    n = 0
    with open_output(path) as f:
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


def merge_query_lines(
    path: str | Path, lines: Iterable[tuple[int, QueryWithFullParagraphList]]
) -> list[QueryWithFullParagraphList]:
    """Queries in the order of their first line, the passages of repeated query lines appended.

    A passage id twice for one query is an error naming both lines: its grades and judgments
    would be counted twice, or one copy silently lost.
    """
    queries: dict[str, QueryWithFullParagraphList] = {}
    seen: dict[str, dict[str, int]] = {}
    for line_no, q in lines:
        where = seen.setdefault(q.queryId, {})
        for p in q.paragraphs:
            first = where.get(p.paragraph_id)
            if first is not None:
                other = "the same line" if first == line_no else f"line {first}"
                raise UserError(
                    f"{path}:{line_no}: passage {p.paragraph_id} of query {q.queryId} is also on {other}"
                )
            where[p.paragraph_id] = line_no
        if q.queryId in queries:
            queries[q.queryId].paragraphs.extend(q.paragraphs)
        else:
            queries[q.queryId] = q
    return list(queries.values())


def read_passages(path: str | Path) -> Iterator[QueryWithFullParagraphList]:
    """The queries of a passages file, one at a time; lines of one query are merged."""
    lines = parse_lines(path, iter_json_lines(path), parse_query_line)
    return iter(merge_query_lines(path, lines))


def write_passages(path: str | Path, queries: Iterable[QueryWithFullParagraphList]) -> int:
    return write_json_lines(path, queries)


# --- test banks --------------------------------------------------------------------------------


def unique_banks(path: str | Path, lines: Iterable[tuple[int, TestBank]]) -> Iterator[TestBank]:
    """Banks in file order; a second bank for one query (and facet) is an error naming both lines."""
    seen: dict[tuple[str, str | None], int] = {}
    for line_no, bank in lines:
        key = (bank.query_id, bank.facet_id)
        if key in seen:
            what = f"query {bank.query_id}" + (f" facet {bank.facet_id}" if bank.facet_id else "")
            raise UserError(f"{path}:{line_no}: a second bank for {what} (the first is on line {seen[key]})")
        seen[key] = line_no
        yield bank


def read_bank(path: str | Path) -> Iterator[TestBank]:
    """Stream a test bank, one :class:`TestBank` (query or facet) per line."""
    return unique_banks(path, parse_lines(path, iter_json_lines(path), TestBank.model_validate))


def write_bank(path: str | Path, banks: Iterable[TestBank]) -> int:
    return write_json_lines(path, banks)


def read_model_lines(path: str | Path, model: type[BaseModel]) -> Iterator[BaseModel]:
    """Stream any one-object-per-line file as ``model`` instances."""
    return read_models(path, model.model_validate)


def read_workbench_file(path: str | Path) -> list[TestBank] | list[QueryWithFullParagraphList]:
    """A test bank or a passages file, told apart by the first line (an object or an array).

    The file is read once, so this works on a pipe or standard input.
    """
    lines = list(iter_json_lines(path))
    if lines and isinstance(lines[0][1], dict):
        return list(unique_banks(path, parse_lines(path, lines, TestBank.model_validate)))
    return merge_query_lines(path, parse_lines(path, lines, parse_query_line))
