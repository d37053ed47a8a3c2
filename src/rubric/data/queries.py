"""Queries: JSON ``{"qid": "text"}`` (the workbench's own), TREC topics TSV, or JSON lines.

JSON lines accept the usual field names (``qid``/``query_id``/``id``/``topic_id`` and
``query``/``text``/``title``/``topic``), which covers ir_datasets exports and the TREC RAG 2025
topics file. A query id given twice with different texts is an error naming both lines (which
text would be graded?); an exact repeat is harmless and read once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from rubric.data.files import open_output, read_text, text_lines
from rubric.data.irds import irds_id, irds_queries
from rubric.data.json_line import load_json
from rubric.errors import UserError

ID_FIELDS = ("qid", "query_id", "id", "topic_id", "_id")
TEXT_FIELDS = ("query", "text", "title", "topic", "query_text")

Queries = dict[str, str]


def _first(obj: dict, names: tuple[str, ...]) -> object | None:
    for name in names:
        if name in obj and obj[name] is not None:
            return obj[name]
    return None


class _Queries:
    """Queries as they are read, with where each came from, so that a conflicting repeat names both."""

    def __init__(self) -> None:
        self.queries: Queries = {}
        self.origin: dict[str, str] = {}

    def add(self, qid: str, text: str, where: str) -> None:
        if qid in self.queries and self.queries[qid] != text:
            raise UserError(f"{where}: query {qid} again, with another text (first at {self.origin[qid]})")
        self.queries.setdefault(qid, text)
        self.origin.setdefault(qid, where)


class _Pairs(list):
    """A JSON object as its list of (key, value) pairs: repeated keys are kept, not overwritten."""


def _plain(value: object) -> object:
    if isinstance(value, _Pairs):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _key_line(text: str, key: str, nth: int) -> int:
    """The line of the ``nth`` (0-based) ``"key":`` of a JSON text, for messages."""
    pattern = re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:"
    hits = [m.start() for m in re.finditer(pattern, text)]
    return text.count("\n", 0, hits[min(nth, len(hits) - 1)]) + 1 if hits else 1


def _from_object(path: Path, text: str, pairs: _Pairs) -> Queries:
    out = _Queries()
    count: dict[str, int] = {}
    for k, v in pairs:
        count[k] = count.get(k, -1) + 1
        out.add(str(k), v, f"{path}:{_key_line(text, k, count[k])}")
    return out.queries


def _parse_records(path: Path, records: list[tuple[str, object]]) -> Queries:
    """Queries from ``(location, record)`` pairs (JSON lines, or the records of a JSON list)."""
    out = _Queries()
    for where, rec in records:
        if not isinstance(rec, dict):
            raise UserError(f"{where}: expected a JSON object with a query id and text")
        qid, text = _first(rec, ID_FIELDS), _first(rec, TEXT_FIELDS)
        if qid is None:
            raise UserError(f"{where}: no query id (one of {', '.join(ID_FIELDS)})")
        if text is None:
            raise UserError(f"{where}: no query text (one of {', '.join(TEXT_FIELDS)})")
        out.add(str(qid), str(text), where)
    return out.queries


def _is_record(pairs: _Pairs) -> bool:
    """``{"qid": "1", "query": "..."}``: one JSON-lines record, not a map of query ids to texts."""
    keys = {k for k, _ in pairs}
    return bool(keys & set(ID_FIELDS)) and bool(keys & set(TEXT_FIELDS))


def _parse_json(path: Path, text: str) -> Queries:
    try:
        whole = load_json(str(path), text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError:
        whole = None  # JSON lines
    if isinstance(whole, _Pairs) and all(isinstance(v, str) for _, v in whole) and not _is_record(whole):
        return _from_object(path, text, whole)
    if isinstance(whole, list) and not isinstance(whole, _Pairs):
        return _parse_records(path, [(f"{path}: record {i}", _plain(r)) for i, r in enumerate(whole, 1)])
    if whole is not None and not isinstance(whole, _Pairs):
        raise UserError(f'{path}: expected {{"qid": "query text", ...}} or a list of query records')
    records = []
    for line_no, line in text_lines(text):
        if line.strip():
            try:
                records.append((f"{path}:{line_no}", load_json(f"{path}:{line_no}", line)))
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{line_no}: not valid JSON ({e.msg})") from None
    return _parse_records(path, records)


def read_queries(path: str | Path) -> Queries:
    """Read queries from JSON, JSON lines or TSV (``qid<TAB>text``), detected by content, or
    from an ir_datasets dataset named ``irds:ID`` (:mod:`rubric.data.irds`)."""
    dataset = irds_id(path)
    if dataset is not None:
        return irds_queries(dataset)
    path = Path(path)
    text = read_text(path)
    if text.lstrip().startswith(("{", "[")):
        return _parse_json(path, text)
    out = _Queries()
    for line_no, line in text_lines(text):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t", 1)
        if len(parts) != 2:
            parts = line.strip().split(None, 1)
        if len(parts) != 2 or not parts[1].strip():
            raise UserError(f"{path}:{line_no}: expected 'query_id<TAB>query text'")
        out.add(parts[0].strip(), parts[1].strip(), f"{path}:{line_no}")
    if not out.queries:
        raise UserError(f"{path}: no queries found")
    return out.queries


def write_queries(path: str | Path, queries: Queries, fmt: str = "json") -> None:
    """Write queries as the workbench JSON object, TSV, or JSON lines (``{"qid", "query"}``)."""
    if fmt not in ("json", "tsv", "jsonl"):
        raise UserError(f"{{fmt}}: unknown queries format {fmt!r} (json, tsv, jsonl)", "fmt")
    with open_output(path) as f:
        if fmt == "json":
            json.dump(queries, f, ensure_ascii=False, indent=1)
            f.write("\n")
        elif fmt == "tsv":
            for qid, text in queries.items():
                f.write(f"{qid}\t{' '.join(text.split())}\n")
        else:
            for qid, text in queries.items():
                f.write(json.dumps({"qid": qid, "query": text}, ensure_ascii=False) + "\n")
