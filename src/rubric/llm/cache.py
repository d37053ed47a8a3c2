"""A sqlite cache of LLM answers, shared by every backend and phase.

Keyed by backend, model, decoding options and the exact prompt text, so re-running a phase, or
grading the passages of a new run, only pays for prompts never asked before. sqlite in WAL mode
lets the shards of a job array on one machine share a cache file. The default location is
``$RUBRIC_CACHE`` or ``$XDG_CACHE_HOME/rubric-workbench/responses.sqlite``; ``--no-cache``
turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rubric.errors import UserError


def default_cache_path() -> Path:
    if os.environ.get("RUBRIC_CACHE"):
        return Path(os.environ["RUBRIC_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rubric-workbench" / "responses.sqlite"


def cache_key(backend: str, model: str, options: dict[str, Any], prompt: str, kind: str = "generate") -> str:
    """A stable key: sha256 over the canonical JSON of everything that changes the answer."""
    blob = json.dumps([kind, backend, model, options, prompt], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """``get_many`` / ``put_many`` over a sqlite table of (key -> answer JSON)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses "
                "(key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)"
            )
        except sqlite3.Error as e:
            raise UserError(f"--cache {self.path}: cannot open the response cache ({e})") from None

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The cached values of those keys that are present."""
        found: dict[str, Any] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for key, value in self._db.execute(
                f"SELECT key, value FROM responses WHERE key IN ({marks})", chunk
            ):
                found[key] = json.loads(value)
        return found

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        rows = [(k, json.dumps(v, ensure_ascii=False), time.time()) for k, v in items]
        if rows:
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
