"""Grading a passages file into an output file: the lock, the partial file, resume and the final write.

Work flows in chunks of consecutive queries (``chunk_pairs`` pairs, also the span of
cross-query batching). Each finished chunk's queries are appended to ``OUT.partial`` and
synced; a killed run (even ``kill -9``) rerun with the same arguments keeps them and goes on.
The final file is written atomically, in input order, from those lines, so it is byte for byte
the file of an uninterrupted run. Memory holds one chunk and the query order, not the file.

What keeps runs from mixing:

- ``OUT.lock`` is held (``flock``) for the whole run: a second run on the same output stops at
  once with a :class:`UserError` (exit 2) instead of writing the same files.
- The partial file's first line records the run's fingerprint: the input files (path, size,
  digest of the content), the backend, model, prompts and options. A partial of other arguments
  is refused (exit 2) with what differs and how to go on; one whose only difference is the
  content of the inputs (edited since, even with the same size and modification time) is moved
  aside (``.stale``) with a warning. It is never appended to or resumed into the output.
- Each resumed line must be the graded form of its input query (same passage ids, in order);
  a line that is not (forged, or of another input) is done again, with a warning.
- A partial damaged after its header (a cut or binary line, e.g. a full disk) resumes from its
  last intact query, with a warning; a damaged header sets the file aside (``.damaged``).

Queries with a failed pair are written to the output without the failed records but stay out
of the partial file, so the rerun grades only them (their answered pairs come from the cache).

Grading in place (``-o`` naming the passages file) with a query selection or a shard copies the
queries that are not graded through unchanged (:class:`Kept`): they go into the partial file like
graded ones, so the output holds every query of the input, in its order, with its earlier grades.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rubric.data.files import atomic_write
from rubric.data.models import QueryWithFullParagraphList
from rubric.errors import UserError
from rubric.grading.engine import Engine, GradeStats

CHUNK_PAIRS = 4096
PARTIAL_FORMAT = 2  # version of the partial file's header
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kept:
    """A query of the input that this run does not grade but must keep (grading in place with a
    query selection or a shard): written to the output as it was read, its grades untouched."""

    query: QueryWithFullParagraphList


KEPT_BYTES = 1 << 22  # kept lines waiting for the partial file, at most (memory stays bounded)


def query_line(q: QueryWithFullParagraphList) -> str:
    """One line of the passages file, exactly as :func:`rubric.data.jsonl.write_passages` writes it."""
    return json.dumps(q.to_json(), ensure_ascii=False)


def file_identity(path: Path) -> list[Any]:
    """What identifies an input for resuming: its path, size and a digest of its content (not its
    modification time, which an edit in place may keep and a copy may not)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        size = path.stat().st_size
    except OSError as e:
        raise UserError(f"{path}: cannot read ({e.strerror or e})") from None
    return [str(path.resolve()), size, digest.hexdigest()]


class OutputLock:
    """An exclusive lock on ``OUT.lock`` for one run writing ``OUT`` (and ``OUT.partial``).

    ``flock`` is released by the kernel when the process dies, so a killed run leaves no stale
    lock: the lock file may stay, the lock does not. The file is removed on a clean exit (after
    checking that it is still the locked file, so a run that starts meanwhile is never fooled).
    """

    def __init__(self, output: Path):
        self.output = output
        self.path = output.with_name(output.name + ".lock")
        self._file: IO[bytes] | None = None

    def __enter__(self) -> OutputLock:
        import fcntl

        created = not self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"{self.path.parent}: cannot create folder ({e.strerror or e})") from None
        while True:
            try:
                f = open(self.path, "a+b", buffering=0)  # noqa: SIM115 - held until __exit__
            except OSError as e:
                what = (
                    "is a directory"
                    if isinstance(e, IsADirectoryError)
                    else f"cannot write ({e.strerror or e})"
                )
                raise UserError(
                    f"{self.path}: {what}; the lock file of {{output}} {self.output}", "output"
                ) from None
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                holder = f.read().decode("utf-8", "replace").strip()
                f.close()
                raise UserError(
                    f"{{output}} {self.output}: another `rubric grade` is writing this output"
                    f"{f' (pid {holder})' if holder else ''}; wait for it or give another {{output}}",
                    "output",
                ) from None
            try:
                same = os.fstat(f.fileno()).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            f.close()  # the file was removed by a run that just finished: lock the new one
        try:
            f.truncate(0)
            f.write(str(os.getpid()).encode())
        except OSError as e:  # a full disk: the pid is a courtesy, but say it and leave nothing
            f.close()
            if created:
                self.path.unlink(missing_ok=True)
            raise UserError(
                f"{self.path}: cannot write ({e.strerror or e}); the lock file of {{output}} {self.output}",
                "output",
            ) from None
        self._file = f
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self.path.unlink(missing_ok=True)
            self._file.close()
            self._file = None


class PartialFile:
    """``OUT.partial``: a header with the run's fingerprint, then one finished query per line."""

    def __init__(self, output: Path, fingerprint: dict[str, Any]):
        self.path = output.with_name(output.name + ".partial")
        self.parts = {name: _digest(value) for name, value in sorted(fingerprint.items())}
        self.header = json.dumps(
            {"rubric_grade_partial": PARTIAL_FORMAT, "fingerprint": _digest(self.parts), "parts": self.parts}
        )
        self.index: dict[str, tuple[int, int]] = {}  # query id -> (offset, length) of its line
        self._size = 0

    def load(self) -> None:
        """Index the finished queries of an earlier run with the same arguments.

        Refuses the partial of another run; truncates a damaged tail after a warning.
        """
        if not self.path.exists():
            return
        if self.path.is_dir():
            raise UserError(f"{self.path}: is a directory; remove it or give another {{output}}", "output")
        raw = self.path.read_bytes()
        newline = raw.find(b"\n")
        header = _json(raw[: newline if newline >= 0 else len(raw)])
        if newline < 0 or not isinstance(header, dict) or "rubric_grade_partial" not in header:
            aside = self.path.with_name(self.path.name + ".damaged")
            os.replace(self.path, aside)
            log.warning(
                "%s: not a partial file of `rubric grade` (damaged first line); moved to %s", self.path, aside
            )
            return
        if header != json.loads(self.header):
            if self._only_inputs_differ(header):  # the inputs changed since: it cannot be finished
                aside = self.path.with_name(self.path.name + ".stale")
                os.replace(self.path, aside)
                log.warning(
                    "%s: left by a run on other content of the input files (edited since); moved to %s, "
                    "starting over",
                    self.path,
                    aside,
                )
                return
            raise UserError(self._other_run(header))
        offset = newline + 1
        line_no = 1
        while offset < len(raw):
            end = raw.find(b"\n", offset)
            line_no += 1
            record = _json(raw[offset:end]) if end >= 0 else None
            if not (isinstance(record, list) and len(record) == 2 and isinstance(record[0], str)):
                if end >= 0:  # a line cut by a kill has no newline: that is expected, not damage
                    log.warning(
                        "%s:%d: damaged line; resuming from the %d queries before it",
                        self.path,
                        line_no,
                        len(self.index),
                    )
                break
            self.index[record[0]] = (offset, end - offset)
            offset = end + 1
        if offset < len(raw):
            with open(self.path, "r+b") as f:
                f.truncate(offset)
        self._size = offset

    def _only_inputs_differ(self, header: dict[str, Any]) -> bool:
        theirs = header.get("parts")
        if not isinstance(theirs, dict) or set(theirs) != set(self.parts):
            return False
        return [name for name, digest in self.parts.items() if theirs[name] != digest] == ["inputs"]

    def _other_run(self, header: dict[str, Any]) -> str:
        theirs = header.get("parts") if isinstance(header.get("parts"), dict) else {}
        differ = [name for name, digest in self.parts.items() if theirs.get(name) != digest]
        what = (
            f"other {', '.join(differ)}"
            if theirs and differ
            else "an earlier release of rubric-workbench or other arguments"
        )
        return (
            f"{self.path}: left by an interrupted `rubric grade` with {what}; rerun that command to "
            f"finish it, or delete {self.path.name} to start this run over"
        )

    def start(self) -> None:
        """A new partial file holding only the header (when none was resumed)."""
        if self._size:
            return
        try:
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(self.header + "\n")
        except OSError as e:
            self.path.unlink(missing_ok=True)
            raise UserError(f"{self.path}: cannot write ({e.strerror or e})") from None
        self._size = len(self.header.encode("utf-8")) + 1

    def append(self, lines: list[tuple[str, str]]) -> None:
        """Add finished (query id, line) pairs and sync them to disk."""
        if not lines:
            return
        try:
            with open(self.path, "ab") as f:
                for qid, line in lines:
                    data = line.encode("utf-8")
                    f.write(data + b"\n")
                    self.index[qid] = (self._size, len(data))
                    self._size += len(data) + 1
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:  # a full disk: what was synced before resumes; a cut line is dropped
            raise UserError(
                f"{self.path}: cannot write ({e.strerror or e}); rerun to resume from the queries it holds"
            ) from None

    def matches(self, query: QueryWithFullParagraphList) -> bool:
        """Whether the finished line of ``query`` is the graded form of this input query: the
        same passages (ids, in order). A partial of another input that happens to carry the same
        fingerprint (forged, copied, or an input edited without a trace) is not resumed."""
        try:
            with open(self.path, "rb") as f:
                record = _json(_read(f, self.index[query.queryId]).encode("utf-8"))
        except (OSError, UnicodeDecodeError, KeyError):
            return False
        if not (isinstance(record, list) and len(record) == 2 and isinstance(record[1], list)):
            return False
        ids = [p.get("paragraph_id") if isinstance(p, dict) else None for p in record[1]]
        return record[0] == query.queryId and ids == [p.paragraph_id for p in query.paragraphs]

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def grade_file(
    engine: Engine,
    queries: Iterable[QueryWithFullParagraphList | Kept],
    output: Path,
    inputs: Sequence[Path | list[str]],
    *,
    total_pairs: int | None = None,
    progress_factory: Callable[[int | None], Any] | None = None,
    chunk_pairs: int = CHUNK_PAIRS,
    lock: bool = True,
    selection: Any = None,
) -> GradeStats:
    """Grade ``queries`` into ``output`` with lock and resume; returns the run's statistics.

    A :class:`Kept` query is written to the output unchanged (not graded).

    ``inputs`` are the files the queries came from (their identity is part of the fingerprint), or
    an identity the caller made (inputs given as objects: their content's digest).
    Warnings (a damaged or stale partial file) go to the ``rubric`` logger. ``lock`` False: the caller
    holds the :class:`OutputLock` already (taken before the model loaded). ``selection`` (the
    queries graded when others are :class:`Kept`) is part of the fingerprint: a partial that kept
    a query must not be resumed by a run that grades it.
    """
    with OutputLock(output) if lock else contextlib.nullcontext():
        identities = [file_identity(p) if isinstance(p, Path) else p for p in inputs]
        fingerprint = {**engine.fingerprint(), "inputs": identities}
        if selection is not None:
            fingerprint["selection"] = selection
        partial = PartialFile(output, fingerprint)
        partial.load()
        partial.start()
        return _run(
            engine,
            queries,
            output,
            partial,
            total_pairs=total_pairs,
            progress_factory=progress_factory,
            chunk_pairs=chunk_pairs,
        )


def _run(
    engine: Engine,
    queries: Iterable[QueryWithFullParagraphList | Kept],
    output: Path,
    partial: PartialFile,
    *,
    total_pairs: int | None,
    progress_factory: Callable[[int | None], Any] | None,
    chunk_pairs: int,
) -> GradeStats:
    stats = engine.stats
    resumed = dict(partial.index)
    order: list[str] = []
    seen: set[str] = set()
    failed_lines = _Spill(output)
    bar = progress_factory(total_pairs) if progress_factory else None
    if bar is not None:
        engine.progress = bar.update
    try:
        chunk: list[QueryWithFullParagraphList] = []
        size = 0
        kept: list[tuple[str, str]] = []
        kept_bytes = 0

        def flush() -> None:
            graded = engine.grade_chunk(chunk)
            lines = [(g.queryId, query_line(g)) for g in graded]
            partial.append([(q, line) for q, line in lines if q not in engine.failed_queries])
            failed_lines.add([(q, line) for q, line in lines if q in engine.failed_queries])

        for item in queries:
            q = item.query if isinstance(item, Kept) else item
            if q.queryId in seen:
                raise UserError(f"query {q.queryId} occurs twice in the passages file")
            seen.add(q.queryId)
            order.append(q.queryId)
            if q.queryId in resumed and not partial.matches(q):
                del resumed[q.queryId]
                log.warning(
                    "%s: query %s does not match the input (other passages); set aside, it is done again",
                    partial.path,
                    q.queryId,
                )
            if isinstance(item, Kept):
                stats.kept_queries += 1
                if q.queryId not in resumed:
                    kept.append((q.queryId, query_line(q)))
                    kept_bytes += len(kept[-1][1])
                    if kept_bytes >= KEPT_BYTES:
                        partial.append(kept)
                        kept, kept_bytes = [], 0
                continue
            if q.queryId in resumed:
                stats.resumed_queries += 1
                if bar is not None:
                    bar.update(engine.count_pairs([q]))
                continue
            chunk.append(q)
            size += engine.count_pairs([q])
            if size >= chunk_pairs:
                flush()
                chunk, size = [], 0
        if chunk:
            flush()
        partial.append(kept)
    finally:
        if bar is not None:
            bar.close()
    stats.queries = len(order)
    with open(partial.path, "rb") as done, atomic_write(output) as f:
        for qid in order:
            f.write(failed_lines.get(qid) if qid in failed_lines else _read(done, partial.index[qid]))
            f.write("\n")
    failed_lines.close()
    if not engine.failed_queries:
        partial.remove()  # with failures it stays, so a rerun grades only the failed queries again
    return stats


class _Spill:
    """Lines of queries with failed pairs: needed for the output, never for resume (a temporary
    file, so memory does not grow with them)."""

    def __init__(self, output: Path):
        self._file = tempfile.TemporaryFile(dir=output.parent, prefix=f".{output.name}.failed.")
        self._index: dict[str, tuple[int, int]] = {}

    def add(self, lines: list[tuple[str, str]]) -> None:
        for qid, line in lines:
            data = line.encode("utf-8")
            self._file.seek(0, os.SEEK_END)
            self._index[qid] = (self._file.tell(), len(data))
            self._file.write(data)

    def __contains__(self, qid: str) -> bool:
        return qid in self._index

    def get(self, qid: str) -> str:
        return _read(self._file, self._index[qid])

    def close(self) -> None:
        self._file.close()


def _read(f: IO[bytes], where: tuple[int, int]) -> str:
    offset, length = where
    f.seek(offset)
    return f.read(length).decode("utf-8")


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None


def _digest(value: Any) -> str:
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
