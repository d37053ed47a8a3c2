"""Passage text lookup from collection files, keeping only the ids asked for.

Accepted, told apart by their first line:

* MS MARCO-style TSV (``docid<TAB>text``; extra columns such as a title are joined);
* JSON lines with an id field (``docid``/``id``/``doc_id``/``pid``/``_id``/``segment_id``) and a
  text field (``text``/``contents``/``segment``/``doc``/``body``/``passage``/``content``; a
  ``title`` is prepended to ``segment`` as in MS MARCO v2.1 segments), as Pyserini corpora and
  ir_datasets exports write them;
* a workbench passages file (``[qid, [passage, ...]]`` lines, e.g. from ``rubric convert runs``);
* RankLLM / Pyserini candidate JSON: one JSON list of ``{"query": ..., "hits": [{"docid": ...,
  "content": ...}]}``, the retrieve results RankLLM reranks.

TSV, JSON lines and passages files are streamed and only the wanted ids are kept in memory, so an
8.8M-passage collection can be scanned for a 10k-passage pool. A kept id found again with another
text (in the same or another file) is an error naming both places; an exact repeat, such as the
same passage in two of the files given, is harmless.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import chain
from pathlib import Path

from rubric.data.files import iter_lines
from rubric.data.irds import irds_id, irds_texts
from rubric.data.json_line import load_json, not_json, parse_json_line
from rubric.errors import UserError

ID_FIELDS = ("docid", "id", "doc_id", "pid", "_id", "segment_id")
TEXT_FIELDS = ("text", "contents", "segment", "doc", "body", "passage", "content")
FORMATS = (
    "TSV 'docid<TAB>text', JSON lines with an id and a text field, a workbench passages file, or "
    "RankLLM/Pyserini candidate JSON"
)
"""The formats :func:`load_texts` reads, for messages."""


def _record_text(rec: dict) -> str | None:
    for name in TEXT_FIELDS:
        value = rec.get(name)
        if isinstance(value, str):
            title = rec.get("title")
            if name == "segment" and isinstance(title, str) and title:
                return f"{title} {value}"
            return value
    return None


class _Texts:
    """Texts as they are read, with where each came from, so that a conflicting repeat names both."""

    def __init__(self, wanted: set[str] | None) -> None:
        self.wanted = wanted
        self.texts: dict[str, str] = {}
        self.origin: dict[str, str] = {}

    def wants(self, docid: str) -> bool:
        return self.wanted is None or docid in self.wanted

    def put(self, docid: str, text: str, where: str) -> None:
        if docid in self.texts:
            if self.texts[docid] != text:
                raise UserError(
                    f"{where}: document {docid} again, with another text (first at {self.origin[docid]})"
                )
            return
        self.texts[docid] = text
        self.origin[docid] = where


def load_texts(paths: Iterable[str | Path], wanted: set[str] | None = None) -> dict[str, str]:
    """``{docid: text}`` for the ``wanted`` ids (all ids when None) from one or more files
    in any of the :data:`FORMATS`, or ir_datasets datasets named ``irds:ID`` (the wanted
    documents looked up in its store, :mod:`rubric.data.irds`)."""
    found = _Texts(wanted)
    for path in paths:
        dataset = irds_id(path)
        if dataset is not None:
            for docid, text in irds_texts(dataset, wanted).items():
                found.put(docid, text, str(path))
            continue
        lines = iter_lines(path)
        first = next(((n, line) for n, line in lines if line.strip()), None)
        if first is None:
            continue
        rest = chain([first], lines)
        head = first[1].lstrip()
        if head.startswith("{"):
            _read_records(path, rest, found)
        elif head.startswith("["):
            if _passages_line(first[1]):
                _read_passages(path, rest, found)
            else:
                lead = "\n" * (first[0] - 1)  # blank lines before: line numbers stay true
                _read_candidates(path, lead + "\n".join(line for _, line in rest), found)
        else:
            _read_tsv(path, rest, found)
    return found.texts


def _read_tsv(path: str | Path, lines: Iterable[tuple[int, str]], found: _Texts) -> None:
    for line_no, line in lines:
        if not line.strip():
            continue
        docid, sep, rest = line.partition("\t")
        if not sep:
            raise UserError(f"{path}:{line_no}: expected 'docid<TAB>text' (accepted: {FORMATS})")
        if found.wants(docid):
            found.put(docid, " ".join(rest.split("\t")), f"{path}:{line_no}")


def _read_records(path: str | Path, lines: Iterable[tuple[int, str]], found: _Texts) -> None:
    for line_no, line in lines:
        if not line.strip():
            continue
        where = f"{path}:{line_no}"
        rec = parse_json_line(path, line_no, line)
        if not isinstance(rec, dict):
            raise UserError(f"{where}: expected a JSON object with a document id and text")
        _put_record(rec, where, found)


def _put_record(rec: dict, where: str, found: _Texts) -> None:
    docid = next((rec[k] for k in ID_FIELDS if k in rec), None)
    if docid is None:
        raise UserError(f"{where}: no document id (one of {', '.join(ID_FIELDS)})")
    docid = str(docid)
    if not found.wants(docid):
        return
    text = _record_text(rec)
    if text is None:
        raise UserError(f"{where}: no text field (one of {', '.join(TEXT_FIELDS)})")
    found.put(docid, text, where)


def _passages_line(line: str) -> bool:
    """Whether a line is one query of a workbench passages file: ``[qid, [passage, ...]]``."""
    try:
        rec = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(rec, list) and len(rec) == 2 and isinstance(rec[1], list)


def _read_passages(path: str | Path, lines: Iterable[tuple[int, str]], found: _Texts) -> None:
    for line_no, line in lines:
        if not line.strip():
            continue
        where = f"{path}:{line_no}"
        rec = parse_json_line(path, line_no, line)
        if not (isinstance(rec, list) and len(rec) == 2 and isinstance(rec[1], list)):
            raise UserError(f"{where}: expected [query id, [passage, ...]] as on the first line")
        for para in rec[1]:
            if (
                not isinstance(para, dict)
                or "paragraph_id" not in para
                or not isinstance(para.get("text"), str)
            ):
                raise UserError(f"{where}: a passage without paragraph_id and text")
            docid = str(para["paragraph_id"])
            if found.wants(docid):
                found.put(docid, para["text"], where)


def _read_candidates(path: str | Path, text: str, found: _Texts) -> None:
    """RankLLM / Pyserini candidates: ``[{"query": ..., "hits": [{"docid", "content"}, ...]}, ...]``."""
    try:
        data = load_json(str(path), text, parse_constant=not_json)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    except ValueError as e:
        raise UserError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, list) or not all(isinstance(q, dict) and "hits" in q for q in data):
        raise UserError(f"{path}: a JSON list, but not of {{query, hits}} objects (accepted: {FORMATS})")
    for i, query in enumerate(data, start=1):
        if not isinstance(query["hits"], list):
            raise UserError(f"{path}: query {i}: 'hits' is not a list")
        for j, hit in enumerate(query["hits"], start=1):
            if not isinstance(hit, dict):
                raise UserError(f"{path}: query {i}, hit {j}: expected a JSON object")
            _put_record(hit, f"{path}: query {i}, hit {j}", found)
