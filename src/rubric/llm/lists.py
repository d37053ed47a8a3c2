"""Robust parsing of list answers: JSON objects, Python lists, fenced blocks, numbered prose.

LLMs asked for ``{"questions": [...]}`` wrap it in Markdown fences, add chatter around it, number
the items, or answer with a bullet list; AutoNuggetizer prompts ask for a Python list
(``["a", "b"]``, sometimes with single quotes, in a ```python fence: castorini/nuggetizer strips
the fences and reads the rest with ``ast.literal_eval``), and small models copy the prompt's own
``[1] passage`` numbering into ``[1] nugget`` lines. :func:`parse_list` accepts all of these and
raises :class:`ParseError` for anything else, so the caller can re-ask (with :data:`RETRY_NUDGE`
appended, which makes a new cache key) a bounded number of times and record the failure.
"""

from __future__ import annotations

import ast
import json
import re
import threading

RETRY_NUDGE = "Answer with the list only, in exactly the format asked for above."

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)
_ITEM_LINE = re.compile(r"^\s*(?:\d+\s*[.):]|[-*\u2022]|\(\d+\))\s+(.+?)\s*$")
# ``[1] text``: read before any bracketed span, whose ``[1]`` alone would be a list of one number
_BRACKET_LINE = re.compile(r"^\s*\[\d+\]\s*(\S.*?)\s*$")


class ParseError(ValueError):
    """The answer holds no list we can read."""


_AST_LOCK = threading.Lock()


def python_literal(text: str) -> object:
    """``ast.literal_eval`` one thread at a time.

    CPython 3.11 keeps the AST converter's recursion depth per interpreter, not per thread, so
    two threads parsing at once (answers parsed while a threaded server or the caller's own
    threads parse too) can fail with ``SystemError: AST constructor recursion depth mismatch``
    (python/cpython#106905); an answer must not fail for that.
    """
    with _AST_LOCK:
        return ast.literal_eval(text)


def _as_list(value: object, key: str | None) -> list | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        if key and isinstance(value.get(key), list):
            return value[key]
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
    return None


def _load(text: str) -> object:
    text = text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return python_literal(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _candidates(answer: str) -> list[str]:
    """Substrings that may hold the structure, most specific first."""
    found = [m.group(1) for m in _FENCE.finditer(answer)]
    found.append(answer)
    for open_, close in (("{", "}"), ("[", "]")):
        i, j = answer.find(open_), answer.rfind(close)
        if 0 <= i < j:
            found.append(answer[i : j + 1])
    return found


def _clean(items: list, *, unique: bool = True) -> list[str]:
    out: list[str] = []
    for item in items:
        if isinstance(item, dict):  # {"question": "..."} style entries
            strings = [v for v in item.values() if isinstance(v, str)]
            item = strings[0] if strings else ""
        text = str(item).strip().strip("\"'").strip()
        if text and (not unique or text not in out):
            out.append(text)
    return out


def parse_list(answer: str, key: str | None = None, *, unique: bool = True) -> list[str]:
    """The list of strings in an LLM answer (``key`` picks it out of a JSON object); repeated
    strings are kept once unless ``unique`` is false (labels repeat)."""
    numbered = [m.group(1) for line in answer.splitlines() if (m := _BRACKET_LINE.match(line))]
    if numbered:
        return _clean([re.sub(r",$", "", t) for t in numbered], unique=unique)
    for candidate in _candidates(answer):
        items = _as_list(_load(candidate), key)
        if items is not None:
            cleaned = _clean(items, unique=unique)
            if cleaned or not items:
                return cleaned
    lines = [m.group(1) for line in answer.splitlines() if (m := _ITEM_LINE.match(line))]
    if lines:
        return _clean([re.sub(r",$", "", t) for t in lines], unique=unique)
    raise ParseError(f"no list found in the answer: {answer[:120]!r}")


def parse_labels(answer: str, allowed: dict[str, str], count: int) -> list[str]:
    """``count`` labels, each mapped to its canonical form by ``allowed`` (lower-case keys,
    spaces and hyphens read as underscores); raises :class:`ParseError` on a wrong count or an
    unknown label."""
    raw = parse_list(answer, unique=False)
    labels = []
    for label in raw:
        norm = re.sub(r"[\s-]+", "_", label.strip().lower())
        if norm not in allowed:
            raise ParseError(f"unknown label {label!r} (expected {', '.join(sorted(set(allowed.values())))})")
        labels.append(allowed[norm])
    if len(labels) != count:
        raise ParseError(f"{len(labels)} labels for {count} items")
    return labels
