"""The one response cache of the project, and the layer that puts it around any backend.

:class:`ResponseCache` is a sqlite table ``key -> answer``, keyed by backend, model, options
that change answers, the kind of question (generate, rate with its choices, grade a pair) and
the exact request, so re-running a phase, or grading the passages of a new run, pays only for
requests never asked. sqlite in WAL mode lets the workers of one machine share a file. The
default location is ``responses.sqlite`` in ``$RUBRIC_CACHE_DIR`` (or
``$XDG_CACHE_HOME/rubric-workbench``; see :mod:`rubric.llm.cache_dir`).

:class:`CachedBackend` is the only code that reads or writes it: it answers what the cache
knows, asks the backend for the rest and commits every answer the moment the backend reports
it (per completed API request, per local batch), so a killed run loses only requests in flight.
Failures are never cached. One value encoding for every backend: a JSON object
``{"answer": text, "probabilities": {...}, "score": x}`` (absent fields are None); values
written by earlier releases (the OpenAI backend stored ``answer\\x1f{probabilities}`` strings)
still read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.llm.base import (
    Answer,
    Backend,
    ChoiceRater,
    Failure,
    OnResults,
    PairGrader,
    Request,
    Result,
    TextGenerator,
    deliver,
    failure_of,
)
from rubric.llm.cache_dir import responses_path

LEGACY_SEPARATOR = "\x1f"  # answer and probabilities in values of the old OpenAI cache


def default_cache_path() -> Path:
    """``$RUBRIC_CACHE_DIR/responses.sqlite`` (or the deprecated ``$RUBRIC_CACHE``)."""
    return responses_path()


def open_cache(path: Path | None = None, *, use: bool = True) -> ResponseCache | None:
    """The response cache at ``path`` (default: :func:`default_cache_path`), or None when not
    used; a file that is no sqlite cache is a user error."""
    return ResponseCache(path or default_cache_path()) if use else None


def cache_key(backend: str, model: str, options: dict[str, Any], prompt: str, kind: str = "generate") -> str:
    """A stable key: sha256 over the canonical JSON of everything that changes the answer."""
    blob = json.dumps([kind, backend, model, options, prompt], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def request_text(request: Request) -> str:
    """The text a request is keyed by (the system text, when there is one, before a NUL line; a
    prompt's own decoding settings, when it has any, as JSON before another). Requests without
    them keep the keys of earlier releases."""
    text = request.user if request.system is None else f"{request.system}\n\x00\n{request.user}"
    if request.decoding:
        text = f"{json.dumps(dict(request.decoding), sort_keys=True)}\n\x00\n{text}"
    return text


def encode(answer: Answer) -> dict[str, Any]:
    value: dict[str, Any] = {"answer": answer.text, "probabilities": answer.probabilities}
    if answer.score is not None:
        value["score"] = answer.score
    return value


def decode(value: Any) -> Answer:
    """An answer from its stored value (this release's object, or an old OpenAI string)."""
    if isinstance(value, str):
        text, sep, probs = value.partition(LEGACY_SEPARATOR)
        return Answer(text, json.loads(probs) if sep else None)
    return Answer(value["answer"], value.get("probabilities"), value.get("score"))


def decoded(value: Any) -> Answer | None:
    """:func:`decode`, or None for a value that is not an answer (a damaged or foreign row):
    the request is then asked again, as if it were not cached."""
    try:
        answer = decode(value)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    probs = answer.probabilities
    ok = isinstance(answer.text, str) and (
        probs is None or (isinstance(probs, dict) and all(isinstance(p, int | float) for p in probs.values()))
    )
    return answer if ok and (answer.score is None or isinstance(answer.score, int | float)) else None


COLUMNS = ["key", "value", "created"]


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
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(responses)")]
        except (sqlite3.Error, OSError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise UserError(
                f"{{cache}} {self.path}: cannot open the response cache ({reason}); move the file "
                "aside or give another {cache}",
                "cache",
            ) from None
        if columns != COLUMNS:
            self._db.close()
            raise UserError(
                f"{{cache}} {self.path}: a sqlite file of another schema, not a response cache of "
                f"rubric-workbench (its responses table has columns {', '.join(columns)}); move "
                "it aside or give another {cache}",
                "cache",
            )

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The cached values of those keys that are present."""
        found: dict[str, Any] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            try:
                query = f"SELECT key, value FROM responses WHERE key IN ({marks})"
                rows = self._db.execute(query, chunk).fetchall()
            except sqlite3.Error as e:  # a damaged file
                raise UserError(
                    f"{{cache}} {self.path}: cannot read the response cache ({e}); move it aside or "
                    "give another {cache}",
                    "cache",
                ) from None
            for key, value in rows:
                try:
                    found[key] = json.loads(value)
                except (TypeError, ValueError, RecursionError):  # damaged: :func:`decoded` says so
                    found[key] = None
        return found

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store values in one transaction (committed when this returns)."""
        rows = [(k, json.dumps(v, ensure_ascii=False), time.time()) for k, v in items]
        if rows:
            try:
                with self._db:
                    self._db.execute("BEGIN")
                    self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)", rows)
            except sqlite3.Error as e:  # a full disk, a read-only file
                raise UserError(
                    f"{{cache}} {self.path}: cannot write ({e}); the answers so far are kept", "cache"
                ) from None

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()


Ask = Callable[[list[int], OnResults], list[Result]]


class CachedBackend:
    """The cache layer around one backend: ask only what the cache does not know, keep every
    answer the moment it arrives.

    It offers the calls of the backend's declared capabilities (``generate``, ``rate``,
    ``grade_pairs``) with the backend's signatures; identical requests of one call are asked
    once. ``cache`` None asks everything (and still counts). Prompts, cache hits and failures
    are counted into ``backend.stats``, which the commands report.
    """

    def __init__(self, backend: Backend, cache: ResponseCache | None = None):
        self.backend = backend
        self.cache = cache

    def generate(self, requests: Sequence[Request], on_results: OnResults | None = None) -> list[Result]:
        backend = self._as(TextGenerator, "generate text")
        return self._through(
            "generate",
            [request_text(r) for r in requests],
            lambda todo, sink: backend.generate([requests[i] for i in todo], sink),
            on_results,
        )

    def rate(
        self, requests: Sequence[Request], choices: Sequence[str], on_results: OnResults | None = None
    ) -> list[Result]:
        backend = self._as(ChoiceRater, "rate with choice probabilities")
        return self._through(
            f"rate:{','.join(choices)}",
            [request_text(r) for r in requests],
            lambda todo, sink: backend.rate([requests[i] for i in todo], choices, sink),
            on_results,
        )

    def grade_pairs(
        self, pairs: Sequence[tuple[str, str]], on_results: OnResults | None = None
    ) -> list[Result]:
        backend = self._as(PairGrader, "grade pairs")
        return self._through(
            "pairs",
            [json.dumps(list(p), ensure_ascii=False) for p in pairs],
            lambda todo, sink: backend.grade_pairs([pairs[i] for i in todo], sink),
            on_results,
        )

    def _as(self, capability: type, what: str) -> Any:
        if not isinstance(self.backend, capability):
            raise TypeError(f"the {self.backend.name} backend does not {what}")
        return self.backend

    def _through(self, kind: str, texts: list[str], ask: Ask, on_results: OnResults | None) -> list[Result]:
        b = self.backend
        options = b.options()
        keys = [cache_key(b.name, b.model, options, t, kind) for t in texts]
        stored = self.cache.get_many(keys) if self.cache is not None else {}
        known = {k: a for k, a in ((k, decoded(v)) for k, v in stored.items()) if a is not None}
        b.stats.damaged += len(set(keys)) - len(known) - sum(1 for k in set(keys) if k not in stored)
        results: list[Result | None] = [known.get(k) for k in keys]
        b.stats.prompts += len(keys)
        b.stats.cached += len(keys) - results.count(None)
        deliver(on_results, [(i, r) for i, r in enumerate(results) if r is not None])
        positions: dict[str, list[int]] = {}
        for i, (k, r) in enumerate(zip(keys, results, strict=True)):
            if r is None:
                positions.setdefault(k, []).append(i)
        todo = list(positions)
        if not todo:
            return results  # type: ignore[return-value]
        arrived: set[int] = set()

        def sink(batch: Sequence[tuple[int, Result]]) -> None:
            batch = [(j, r) for j, r in batch if j not in arrived]
            arrived.update(j for j, _ in batch)
            answered = [(todo[j], encode(r)) for j, r in batch if isinstance(r, Answer)]
            if self.cache is not None and answered:
                self.cache.put_many(answered)
            out = [(i, r) for j, r in batch for i in positions[todo[j]]]
            for i, r in out:
                results[i] = r
            deliver(on_results, out)

        try:
            got = ask([positions[k][0] for k in todo], sink)
        except (RuntimeError, ValueError, OSError) as e:  # a backend that raised for the whole call
            got = [failure_of(e)] * len(todo)
        sink([(j, r) for j, r in enumerate(got) if j not in arrived])
        b.stats.failures += sum(1 for r in results if isinstance(r, Failure))
        return results  # type: ignore[return-value]
