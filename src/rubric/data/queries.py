"""Queries: JSON ``{"qid": "text"}`` (the workbench's own), TREC topics TSV, or JSON lines.

JSON lines accept the usual field names (``qid``/``query_id``/``id``/``topic_id`` and
``query``/``text``/``title``/``topic``), which covers ir_datasets exports and the TREC RAG 2025
topics file.
"""

from __future__ import annotations

import json
from pathlib import Path

from rubric.data.files import atomic_write, read_text
from rubric.errors import UserError

ID_FIELDS = ("qid", "query_id", "id", "topic_id", "_id")
TEXT_FIELDS = ("query", "text", "title", "topic", "query_text")

Queries = dict[str, str]


def _first(obj: dict, names: tuple[str, ...]) -> object | None:
    for name in names:
        if name in obj and obj[name] is not None:
            return obj[name]
    return None


def _parse_json_object(path: Path, text: str) -> Queries | None:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(obj, dict) and all(isinstance(v, str) for v in obj.values()):
        return {str(k): v for k, v in obj.items()}
    if isinstance(obj, list):
        return _parse_records(path, list(enumerate(obj, start=1)))
    if isinstance(obj, dict):  # a single JSON-lines record
        return None
    raise UserError(f'{path}: expected {{"qid": "query text", ...}} or a list of query records')


def _parse_records(path: Path, records: list[tuple[int, object]]) -> Queries:
    queries: Queries = {}
    for line_no, rec in records:
        if not isinstance(rec, dict):
            raise UserError(f"{path}:{line_no}: expected a JSON object with a query id and text")
        qid, text = _first(rec, ID_FIELDS), _first(rec, TEXT_FIELDS)
        if qid is None:
            raise UserError(f"{path}:{line_no}: no query id (one of {', '.join(ID_FIELDS)})")
        if text is None:
            raise UserError(f"{path}:{line_no}: no query text (one of {', '.join(TEXT_FIELDS)})")
        queries[str(qid)] = str(text)
    return queries


def read_queries(path: str | Path) -> Queries:
    """Read queries from JSON, JSON lines or TSV (``qid<TAB>text``), detected by content."""
    path = Path(path)
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        whole = _parse_json_object(path, stripped)
        if whole is not None:
            return whole
        records = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append((line_no, json.loads(line)))
                except json.JSONDecodeError as e:
                    raise UserError(f"{path}:{line_no}: not valid JSON ({e.msg})") from None
        return _parse_records(path, records)
    queries: Queries = {}
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.rstrip("\r\n").split("\t", 1)
        if len(parts) != 2:
            parts = line.strip().split(None, 1)
        if len(parts) != 2 or not parts[1].strip():
            raise UserError(f"{path}:{line_no}: expected 'query_id<TAB>query text'")
        queries[parts[0].strip()] = parts[1].strip()
    if not queries:
        raise UserError(f"{path}: no queries found")
    return queries


def write_queries(path: str | Path, queries: Queries, fmt: str = "json") -> None:
    """Write queries as the workbench JSON object, TSV, or JSON lines (``{"qid", "query"}``)."""
    with atomic_write(path) as f:
        if fmt == "json":
            json.dump(queries, f, ensure_ascii=False, indent=1)
            f.write("\n")
        elif fmt == "tsv":
            for qid, text in queries.items():
                f.write(f"{qid}\t{' '.join(text.split())}\n")
        elif fmt == "jsonl":
            for qid, text in queries.items():
                f.write(json.dumps({"qid": qid, "query": text}, ensure_ascii=False) + "\n")
        else:
            raise UserError(f"--format: unknown queries format {fmt!r} (json, tsv, jsonl)")
