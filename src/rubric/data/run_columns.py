"""A run file as columns: query blocks, document ids and float32 scores, in trec_eval's order.

:func:`read_run_columns` parses a run with numpy over its bytes, never making a Python object per
line: line ends and blanks are found with vector comparisons, the query id, document id and score
of every line are cut out as fixed-width byte rows, and the scores are converted in bulk by
numpy's cast of byte strings to double (correctly rounded, as ``strtod``), then to float32.
Each query's lines are then ordered as trec_eval 9.x ranks them: score as a 32-bit float
descending, ties by document id descending (byte order, ``strcmp``).

Only files in the layout every TREC tool writes take this path: one blank between the first six
columns, ``\\n`` line ends, no comments, blank or indented lines. Any other file, and any file
with an error, is read by :func:`~rubric.data.trec.read_run` (the line reader), so the errors
(``file:line``, exit 2) and the accepted inputs are the line reader's, whichever path is taken.

Why numpy and not pyarrow or polars: their CSV readers want one separator character and no
ragged lines, so they would need this fallback too; and after parsing, the work (qrels lookup,
ranking, measures) is array arithmetic that numpy already does. numpy reads a 301k-line run in
about the time pyarrow's reader takes, without a new core dependency (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rubric.data.files import decode_text, open_binary
from rubric.data.trec import Run, RunScores, run_from_text

#: Byte values: newline, blank, tab, ``#``, ``-``, ``+``, ``.``, ``0``.
_NL, _SP, _TAB, _HASH, _MINUS, _PLUS, _DOT, _ZERO = 10, 32, 9, 35, 45, 43, 46, 48
_WIDEST_FIELD = 256  # longer ids or scores take the line reader


@dataclass
class RunColumns:
    """One run: ``queries`` (sorted ids) own rows ``offsets[i]:offsets[i+1]`` of ``docs`` (bytes,
    a numpy ``S`` array) and ``scores`` (float32), each query's rows in trec_eval's order."""

    name: str
    queries: list[str]
    offsets: np.ndarray
    docs: np.ndarray
    scores: np.ndarray
    path: Path | None = None

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def block(self, i: int) -> slice:
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def cut(self, max_docs: int | None) -> RunColumns:
        """Each ranking cut to its first ``max_docs`` documents (trec_eval ``-M``; None: all)."""
        lengths = np.diff(self.offsets)
        if max_docs is None or not np.any(lengths > max_docs):
            return self
        keep = np.arange(len(self)) - np.repeat(self.offsets[:-1], lengths) < max_docs
        offsets = np.concatenate(([0], np.cumsum(np.minimum(lengths, max_docs)))).astype(np.int64)
        return RunColumns(self.name, self.queries, offsets, self.docs[keep], self.scores[keep], self.path)

    def to_scores(self) -> RunScores:
        """The ``{query: {doc: score}}`` form (for pytrec_eval and the dict-based code)."""
        docs = [d.decode() for d in self.docs.tolist()]
        scores = self.scores.astype(np.float64).tolist()
        return {
            q: dict(zip(docs[a:b], scores[a:b], strict=True))
            for q, a, b in zip(
                self.queries, self.offsets[:-1].tolist(), self.offsets[1:].tolist(), strict=True
            )
        }

    @classmethod
    def from_scores(cls, name: str, scores: RunScores, path: Path | None = None) -> RunColumns:
        """Columns of a run held as a dict (the values are taken as float32, as read)."""
        queries = sorted(q for q, docs in scores.items() if docs)
        docs = [d.encode() for q in queries for d in scores[q]]
        values = [v for q in queries for v in scores[q].values()]
        lengths = [len(scores[q]) for q in queries]
        offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int64)
        doc_array = np.array(docs, dtype=bytes) if docs else np.zeros(0, "S1")
        return _ranked(
            RunColumns(name, queries, offsets, doc_array, np.array(values, dtype=np.float32), path)
        )


def _ranked(run: RunColumns) -> RunColumns:
    """Rows reordered within each query as trec_eval ranks them (a no-op when already so)."""
    docs, scores = run.docs, run.scores + np.float32(0.0)  # -0.0 is 0.0, as C compares them
    if len(scores) > 1:
        qcode = np.repeat(np.arange(len(run.queries)), np.diff(run.offsets))
        same_q = qcode[1:] == qcode[:-1]
        higher = scores[:-1] > scores[1:]
        tie_ok = (scores[:-1] == scores[1:]) & (docs[:-1] > docs[1:])
        if not np.all(~same_q | higher | tie_ok):
            order = np.lexsort((docs, scores, -qcode))[::-1]
            docs, scores = docs[order], scores[order]
    return RunColumns(run.name, run.queries, run.offsets, docs, scores, run.path)


def _fields(arr: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Each ``arr[start:start+length]`` as one row of a zero-padded ``(n, width)`` byte matrix
    (rows of a strided view of ``arr``: no index matrix is made)."""
    width = max(int(lengths.max()) if lengths.size else 1, 1)
    if width > _WIDEST_FIELD:
        return None
    padded = np.concatenate((arr, np.zeros(width, np.uint8)))
    rows = np.lib.stride_tricks.as_strided(padded, shape=(len(arr), width), strides=(1, 1))[starts]
    rows[np.arange(width) >= lengths[:, None]] = 0
    return rows


def parse_scores(window: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Scores from their zero-padded byte rows as float32, rounded via double as C's
    ``(float) atof(s)``: numpy's cast of byte strings to double is correctly rounded (what
    ``strtod`` gives), and accepts what the line reader's :func:`~rubric.data.trec.to_float32`
    accepts. None if one is not a number or not finite as a float32 (the line reader then
    reports it with its line)."""
    del lengths  # the padding ends each text
    texts = np.ascontiguousarray(window).view(f"S{window.shape[1]}").ravel()
    try:
        values = texts.astype(np.float64)
    except ValueError:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        singles = values.astype(np.float32)
    return singles if np.isfinite(singles).all() else None


def _duplicated(qcode: np.ndarray, docs: np.ndarray) -> bool:
    """Whether some query lists a document twice (a hash of each row; a collision only sends
    the file to the line reader, which checks exactly)."""
    words = docs.view(np.uint8).reshape(len(docs), -1)
    pad = (-words.shape[1]) % 8
    if pad:
        words = np.concatenate((words, np.zeros((len(docs), pad), np.uint8)), axis=1)
    words = np.ascontiguousarray(words).view(np.uint64)
    h = qcode.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h = (h ^ words[:, j]) * np.uint64(0x100000001B3)
            h ^= h >> np.uint64(29)
    h.sort()
    return bool(np.any(h[1:] == h[:-1]))


def _wanted_lines(data: bytes, queries: Container[str]) -> bytes | None:
    """The lines of the wanted queries (None: the file is not in the common layout).

    An evaluation reads only the queries of its qrels (43 of the 200 of a TREC DL run): the query
    id of every line is found from its first bytes alone, and only the stretches of lines of
    wanted queries are parsed further. Their other lines are not checked (as trec_eval, which
    reads a bad number as 0)."""
    arr = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(arr == _NL)
    if not len(ends) or ends[-1] != len(arr) - 1:
        ends = np.append(ends, len(arr))
    starts = np.concatenate(([0], ends[:-1] + 1))
    for width in (16, 64):  # query ids are short: look at 16 bytes of each line, else 64
        padded = np.concatenate((arr, np.full(width, _NL, np.uint8)))
        window = np.lib.stride_tricks.as_strided(padded, shape=(len(arr), width), strides=(1, 1))[starts]
        stop = (window == _SP) | (window == _TAB) | (window == _NL)
        if np.all(stop.any(axis=1)):
            break
    else:
        return None
    qlen = stop.argmax(axis=1)
    if np.any(qlen == 0):
        return None  # a blank or indented line: the line reader decides
    window[np.arange(width) >= qlen[:, None]] = 0
    qids = window.view(f"S{width}").ravel()
    change = np.flatnonzero(qids[1:] != qids[:-1]) + 1
    first = np.concatenate(([0], change))
    last = np.concatenate((change, [len(starts)])) - 1
    kept = [q.decode("utf-8", "replace") in queries for q in qids[first].tolist()]
    spans = zip(starts[first].tolist(), (ends[last] + 1).tolist(), kept, strict=True)
    return b"".join(data[a:b] for a, b, keep in spans if keep)


def _parse(
    data: bytes, queries: Container[str] | None
) -> tuple[str, list[str], np.ndarray, np.ndarray, np.ndarray] | None:
    """The columns of a run file in the common layout, or None for the line reader."""
    if not data:
        return None
    if queries is not None:
        tag = _first_tag(data)
        lines = _wanted_lines(data, queries)
        if lines is None or tag is None:
            return None
        if not lines:
            return tag, [], np.zeros(1, np.int64), np.zeros(0, "S1"), np.zeros(0, np.float32)
        parsed = _parse(data if len(lines) == len(data) else lines, None)
        return None if parsed is None else (tag, *parsed[1:])
    arr = np.frombuffer(data, np.uint8)
    if arr[-1] != _NL:
        arr = np.append(arr, np.uint8(_NL))
    if np.any(arr == 13) or (arr.max() >= 128 and not _is_utf8(data)):
        return None
    ends = np.flatnonzero(arr == _NL)
    starts = np.concatenate(([0], ends[:-1] + 1))
    if np.any(ends == starts):
        return None
    first = arr[starts]
    if np.any((first == _SP) | (first == _TAB) | (first == _HASH)):
        return None
    blanks = np.flatnonzero((arr == _SP) | (arr == _TAB))
    at = np.searchsorted(blanks, starts)
    if at.size and at[-1] + 4 >= blanks.size:
        return None
    cut = blanks[at[:, None] + np.arange(5)]  # the first five blanks of each line
    if np.any(cut[:, 4] >= ends - 1) or np.any(np.diff(cut, axis=1) < 2):
        return None  # fewer than six columns, or two blanks in a row: the line reader decides
    qlen = cut[:, 0] - starts
    qwin = _fields(arr, starts, qlen)
    if qwin is None:
        return None
    qbytes = np.ascontiguousarray(qwin).view(f"S{qwin.shape[1]}").ravel()
    change = np.flatnonzero(qbytes[1:] != qbytes[:-1]) + 1
    stretch_start = np.concatenate(([0], change))
    stretch_end = np.concatenate((change, [len(starts)]))
    stretch_q = [q.decode() for q in qbytes[stretch_start].tolist()]
    wanted = sorted({q for q in stretch_q if queries is None or q in queries})
    code = {q: i for i, q in enumerate(wanted)}
    stretch_code = np.array([code.get(q, -1) for q in stretch_q], dtype=np.int64)
    qcode = np.repeat(stretch_code, stretch_end - stretch_start)
    keep = qcode >= 0
    if not keep.all():
        qcode, starts, ends, cut = qcode[keep], starts[keep], ends[keep], cut[keep]
    dwin = _fields(arr, cut[:, 1] + 1, cut[:, 2] - cut[:, 1] - 1)
    slen = cut[:, 4] - cut[:, 3] - 1
    swin = _fields(arr, cut[:, 3] + 1, slen)
    if dwin is None or swin is None:
        return None
    scores = parse_scores(swin, slen) if len(qcode) else np.zeros(0, np.float32)
    if scores is None:
        return None
    docs = np.ascontiguousarray(dwin).view(f"S{dwin.shape[1]}").ravel()
    if len(qcode) and _duplicated(qcode, docs):
        return None
    if np.any(qcode[1:] < qcode[:-1]):  # a query's lines in several stretches, or unsorted ids
        order = np.argsort(qcode, kind="stable")
        qcode, docs, scores = qcode[order], docs[order], scores[order]
    counts = np.bincount(qcode, minlength=len(wanted))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    tag_end = blanks[at[0] + 5] if at[0] + 5 < blanks.size and blanks[at[0] + 5] < ends[0] else ends[0]
    tag = data[int(blanks[at[0] + 4]) + 1 : int(tag_end)].decode()
    return tag, wanted, offsets, docs, scores


def _first_tag(data: bytes) -> str | None:
    """The run tag of the first line (the run's name), or None if that line has no tag."""
    cols = data[: data.find(b"\n") if b"\n" in data else len(data)].split()
    try:
        return cols[5].decode() if len(cols) >= 6 else None
    except UnicodeDecodeError:
        return None


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_run_columns(
    path: str | Path, name: str | None = None, queries: Container[str] | None = None
) -> RunColumns:
    """Read a run file (plain or gzip) into columns; ``name`` defaults to its first line's tag,
    ``queries`` keeps only those queries (as :func:`~rubric.data.trec.read_run`)."""
    with open_binary(path) as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    parsed = _parse(data, queries)
    if parsed is None:  # the line reader, on the bytes already read (a pipe cannot be read twice)
        return columns_of(run_from_text(path, decode_text(path, data), name=name, queries=queries))
    tag, wanted, offsets, docs, scores = parsed
    return _ranked(RunColumns(name or tag, wanted, offsets, docs, scores, Path(path)))


def columns_of(run: Run) -> RunColumns:
    """A run read by the line reader, as columns."""
    return RunColumns.from_scores(run.name, run.scores, run.path)
