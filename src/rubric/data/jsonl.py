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

import functools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from rubric.data.files import iter_lines, open_output, rereadable
from rubric.data.json_line import describe_validation_error, parse_json_line
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList, TestBank
from rubric.errors import UserError

T = TypeVar("T")


def iter_json_lines(path: str | Path, name: str | Path | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed_json)`` for every non-blank line of a JSONL file (messages
    name ``name`` when given: the user's name of a copied input)."""
    shown = path if name is None else name
    for line_no, line in iter_lines(path, name):
        if line.strip():
            yield line_no, parse_json_line(shown, line_no, line)


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


# ``json.dumps(obj, ensure_ascii=False)`` byte for byte, without the check for reference cycles
# (JSON read from a file has none): a fifth less time for a line of a graded file (measured).
encode_line = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def write_json_lines(path: str | Path, records: Iterable[Any]) -> int:
    """Write one JSON value per line (output rule); models are dumped with :meth:`to_json`."""
    n = 0
    with open_output(path) as f:
        for rec in records:
            obj = rec.to_json() if hasattr(rec, "to_json") else rec
            f.write(encode_line(obj))
            f.write("\n")
            n += 1
    return n


# --- the passages interchange file -----------------------------------------------------------


@functools.cache
def _passages_adapter() -> TypeAdapter[list[FullParagraphData]]:
    return TypeAdapter(list[FullParagraphData])


@functools.cache
def _line_adapter() -> TypeAdapter[tuple[str, list[FullParagraphData]]]:
    return TypeAdapter(tuple[str, list[FullParagraphData]])


@dataclass(slots=True)
class ValidatedPassages:
    """The passages of a line already validated while it was parsed (:func:`validated_line`)."""

    passages: list[FullParagraphData]


def validated_line(path: str | Path, line_no: int, line: str) -> tuple[str, Any]:
    """``(query_id, passages)`` of one passages line, validated by pydantic straight from the
    JSON text where it can: one pass in pydantic's parser instead of :func:`json.loads` and then
    validation of the Python objects, about a third less time for the same models (JSON text and
    Python objects validate to the same values for these models).

    Anything else falls back to :func:`~rubric.data.graded.parse_passages_line`, so messages and
    their order are those of the two-step path: a line whose JSON or shape is wrong fails here,
    one whose passages are invalid is validated (and fails, naming the field) by
    :func:`full_passages` in its turn. ``NaN`` and ``Infinity``, which pydantic's parser accepts
    and this format refuses, take the fallback too.
    """
    from rubric.data.graded import parse_passages_line

    if "NaN" not in line and "Infinity" not in line:
        try:
            qid, passages = _line_adapter().validate_json(line)
        except ValidationError:
            pass
        else:
            return qid, ValidatedPassages(passages)
    return parse_passages_line(path, line_no, line)


def full_passages(passages: list | ValidatedPassages) -> list[FullParagraphData]:
    """Every passage of one line validated (one pydantic call for the line, not one per passage);
    the first error reads ``paragraphs[3].paragraph_id: Field required``."""
    if isinstance(passages, ValidatedPassages):
        return passages.passages
    try:
        return _passages_adapter().validate_python(passages)
    except ValidationError as e:
        raise ValueError(describe_validation_error(e, prefix="paragraphs")) from None


def read_passages(
    path: str | Path, name: str | Path | None = None, *, scan: bool = True
) -> Iterator[QueryWithFullParagraphList]:
    """The queries of a passages file, one at a time, fully validated; lines of one query are
    merged (see :mod:`rubric.data.graded`: adjacent lines as they stream, scattered ones gathered
    on disk). Memory holds one query. ``-`` and pipes are copied to a temporary file first, since
    the file is read twice (the query ids, then the queries). Messages name ``name`` if given.

    ``scan=False`` reads the file once, without the first pass: a query whose lines are not
    adjacent then raises :class:`~rubric.data.graded.ScatteredLines`, and a caller that can start
    over (nothing written yet, or written atomically) reads it again with ``scan=True``.
    """
    from rubric.data.graded import query_lines, scan_order, unique_passages

    shown = path if name is None else name
    with rereadable(path) as copy:
        order = scan_order(copy, shown) if scan else None
        for qid, parts in query_lines(copy, order, name=shown, parse=validated_line):
            passages = [p for _, p in unique_passages(shown, qid, parts, full_passages)]
            yield QueryWithFullParagraphList(queryId=qid, paragraphs=passages)


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


def read_bank(path: str | Path, name: str | Path | None = None) -> Iterator[TestBank]:
    """Stream a test bank, one :class:`TestBank` (query or facet) per line."""
    shown = path if name is None else name
    return unique_banks(shown, parse_lines(shown, iter_json_lines(path, name), TestBank.model_validate))


def read_banks(path: str | Path) -> list[TestBank]:
    """Every bank of a file that must hold some: an empty bank file is an error, not an empty
    result (a command would otherwise exit 0 with empty outputs)."""
    banks = list(read_bank(path))
    if not banks:
        raise UserError(f"{path}: holds no test bank (an empty file)")
    return banks


def write_bank(path: str | Path, banks: Iterable[TestBank]) -> int:
    return write_json_lines(path, banks)
