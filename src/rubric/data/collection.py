"""Passage text lookup from a collection file, streaming, keeping only the ids asked for.

Accepted: MS MARCO-style TSV (``docid<TAB>text``; extra columns such as a title are joined) and
JSON lines with an id field (``docid``/``id``/``doc_id``/``pid``/``_id``) and a text field
(``text``/``contents``/``segment``/``doc``/``body``/``passage``; a ``title`` is prepended to
``segment`` as in MS MARCO v2.1 segments). Only the wanted ids are kept in memory, so an
8.8M-passage collection can be scanned for a 10k-passage pool. A kept id found again with
another text (in the same or another file) is an error naming both places; an exact repeat,
such as the same passage in two of the files given, is harmless.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from rubric.data.files import iter_lines
from rubric.data.json_line import load_json
from rubric.errors import UserError

ID_FIELDS = ("docid", "id", "doc_id", "pid", "_id", "segment_id")
TEXT_FIELDS = ("text", "contents", "segment", "doc", "body", "passage")


def _record_text(rec: dict) -> str | None:
    for name in TEXT_FIELDS:
        value = rec.get(name)
        if isinstance(value, str):
            title = rec.get("title")
            if name == "segment" and isinstance(title, str) and title:
                return f"{title} {value}"
            return value
    return None


def load_texts(paths: Iterable[str | Path], wanted: set[str] | None = None) -> dict[str, str]:
    """``{docid: text}`` for the ``wanted`` ids (all ids when None) from one or more files."""
    texts: dict[str, str] = {}
    origin: dict[str, str] = {}
    for path in paths:
        is_json: bool | None = None
        for line_no, line in iter_lines(path):
            if not line.strip():
                continue
            if is_json is None:
                is_json = line.lstrip().startswith("{")
            if is_json:
                try:
                    rec = load_json(f"{path}:{line_no}", line)
                except json.JSONDecodeError as e:
                    raise UserError(f"{path}:{line_no}: not valid JSON ({e.msg})") from None
                if not isinstance(rec, dict):
                    raise UserError(f"{path}:{line_no}: expected a JSON object with a document id and text")
                docid = next((rec[k] for k in ID_FIELDS if k in rec), None)
                if docid is None:
                    raise UserError(f"{path}:{line_no}: no document id (one of {', '.join(ID_FIELDS)})")
                docid = str(docid)
                if wanted is not None and docid not in wanted:
                    continue
                text = _record_text(rec)
                if text is None:
                    raise UserError(f"{path}:{line_no}: no text field (one of {', '.join(TEXT_FIELDS)})")
            else:
                docid, sep, rest = line.partition("\t")
                if not sep:
                    raise UserError(f"{path}:{line_no}: expected 'docid<TAB>text'")
                if wanted is not None and docid not in wanted:
                    continue
                text = " ".join(rest.split("\t"))
            if docid in texts:
                if texts[docid] != text:
                    raise UserError(
                        f"{path}:{line_no}: document {docid} again, with another text "
                        f"(first at {origin[docid]})"
                    )
                continue
            texts[docid] = text
            origin[docid] = f"{path}:{line_no}"
    return texts
