"""Item texts for the reports: graded files hold only item ids, banks hold the texts."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rubric.data.models import TestBank


def bank_items(banks: Iterable[TestBank]) -> dict[str, dict[str, str]]:
    """``{query_id: {item_id: text}}`` in bank order (facets of one query are merged)."""
    out: dict[str, dict[str, str]] = {}
    for b in banks:
        items = out.setdefault(b.query_id, {})
        for it in b.items:
            items[it.item_id] = it.item_text
    return out


def load_item_texts(paths: Iterable[Path]) -> dict[str, str]:
    """``{item_id: text}`` from any number of bank files."""
    from rubric.data.jsonl import read_bank

    texts: dict[str, str] = {}
    for path in paths:
        for items in bank_items(read_bank(path)).values():
            texts.update(items)
    return texts


def short_id(item_id: str) -> str:
    """``q18/b8d87f62e4c0...`` -> ``b8d87f62``: enough to tell items of one query apart."""
    tail = item_id.rsplit("/", 1)[-1]
    return tail[:8] if len(tail) > 8 else tail


def snippet(text: str, width: int) -> str:
    """One line of at most ``width`` characters (0 = unlimited)."""
    flat = " ".join(text.split())
    if width and len(flat) > width:
        return flat[: max(width - 1, 1)] + "…"
    return flat
