"""A run file as columns: query blocks, document ids and float32 scores, in trec_eval's order.

:func:`read_run_columns` parses a run with numpy over its bytes, never making a Python object per
line: line ends and blanks are found with vector comparisons, the query id, document id and score
of every line are cut out as fixed-width byte rows, and the scores are converted in bulk. A
decimal score of at most 18 digits (``12.3456``, ``-0.5``) is exact as ``mantissa / 10**digits``
(both exact doubles, one correctly rounded division: what ``strtod`` gives); other spellings
(``1e-3``, long digit strings) are converted one by one by :func:`~rubric.data.trec.to_float32`,
as the line reader does. Each query's lines are then ordered as trec_eval 9.x ranks them: score
as a 32-bit float descending, ties by document id descending (byte order, ``strcmp``).

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
from rubric.data.trec import Run, RunScores, run_from_text, to_float32

#: Byte values: newline, blank, tab, ``#``, ``-``, ``+``, ``.``, ``0``.
_NL, _SP, _TAB, _HASH, _MINUS, _PLUS, _DOT, _ZERO = 10, 32, 9, 35, 45, 43, 46, 48
_WIDEST_FIELD = 256  # longer ids or scores take the line reader
_EXACT_MANTISSA = 2**53
_POW10 = 10.0 ** np.arange(23)  # exact doubles


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
    """Scores from their byte rows as float32, rounded via double as C's ``(float) atof(s)``;
    None if one is not a finite number (the caller reports it with its line).

    A decimal ``[sign]digits[.digits][e[sign]digits]`` of at most 18 digits is
    ``mantissa / 10**scale``: exact as a double when the mantissa is below 2**53 and the scale
    within 0..22 (one correctly rounded division of two exact doubles, as ``strtod`` rounds);
    otherwise within two units in the last place, which gives the float32 of the exact value
    unless it lies a few units from a point halfway between two float32s. Those, and other
    spellings (``inf``, ``0x1p3``, more digits), are converted one by one as the line reader
    converts them.
    """
    n, width = window.shape
    rows = np.ascontiguousarray(window.T)  # one byte position of every score per row: fast loops
    positions = np.arange(width)[:, None]
    first = rows[0]
    sign = (first == _MINUS) | (first == _PLUS)
    inside = (positions >= sign) & (positions < lengths)
    is_e = inside & ((rows == 101) | (rows == 69))
    has_e = is_e.any(axis=0)
    e_at = np.where(has_e, is_e.argmax(axis=0), lengths)
    in_mantissa = positions < e_at
    is_digit = inside & (rows >= _ZERO) & (rows <= _ZERO + 9)
    mantissa_digit = is_digit & in_mantissa
    exp_digit = is_digit & ~in_mantissa
    is_dot = inside & in_mantissa & (rows == _DOT)
    after_e = rows[np.minimum(e_at + 1, width - 1), np.arange(n)]
    exp_plus = has_e & (after_e == _PLUS)
    exp_minus = has_e & (after_e == _MINUS)
    exp_sign = (positions == e_at + 1) & (exp_plus | exp_minus)
    digits = mantissa_digit.sum(axis=0)
    exp_digits = exp_digit.sum(axis=0)
    plain = (
        np.all(~inside | mantissa_digit | is_dot | exp_digit | is_e | exp_sign, axis=0)
        & (is_dot.sum(axis=0) <= 1)
        & (is_e.sum(axis=0) <= 1)
        & (digits >= 1)
        & (digits <= 18)
        & (~has_e | ((exp_digits >= 1) & (exp_digits <= 3)))
    )
    digit_values = rows.astype(np.int64) - _ZERO
    scale_by = np.where(mantissa_digit, 10, 1)
    add = np.where(mantissa_digit, digit_values, 0)
    mantissa = np.zeros(n, np.int64)
    for j in range(width):
        np.multiply(mantissa, scale_by[j], out=mantissa)
        np.add(mantissa, add[j], out=mantissa)
    dot_at = np.where(is_dot.any(axis=0), is_dot.argmax(axis=0), e_at)
    fraction = (mantissa_digit & (positions > dot_at)).sum(axis=0)
    exponent = np.zeros(n, np.int64)
    if has_e.any():
        for j in range(width):
            np.copyto(exponent, exponent * 10 + digit_values[j], where=exp_digit[j])
        exponent = np.where(exp_minus, -exponent, exponent)
    scale = np.where(plain, fraction - exponent, 0)
    plain &= np.abs(scale) <= 2 * (len(_POW10) - 1)
    scale = np.where(plain, scale, 0)
    down = np.clip(scale, 0, None)
    up = np.clip(-scale, 0, None)
    values = mantissa.astype(np.float64)
    values = values / _POW10[np.minimum(down, 22)] / _POW10[np.maximum(down - 22, 0)]
    values = values * _POW10[np.minimum(up, 22)] * _POW10[np.maximum(up - 22, 0)]
    values = np.where(first == _MINUS, -values, values)
    with np.errstate(over="ignore", invalid="ignore"):
        singles = values.astype(np.float32)
        approximate = (
            plain & ((mantissa > _EXACT_MANTISSA) | (scale < 0) | (scale > 22)) & np.isfinite(singles)
        )
        if approximate.any():  # near a float32 halfway point the last units of the double matter
            v, f = values[approximate], singles[approximate]
            toward = np.nextafter(f, np.where(v > f, np.float32(np.inf), np.float32(-np.inf)))
            halfway = (f.astype(np.float64) + toward.astype(np.float64)) / 2
            plain[np.flatnonzero(approximate)[np.abs(v - halfway) <= 8 * np.spacing(np.abs(v))]] = False
    odd = np.flatnonzero(~plain)
    if odd.size:
        texts = [bytes(window[i, : lengths[i]]).decode("ascii", "replace") for i in odd.tolist()]
        try:
            singles[odd] = to_float32(texts)
        except ValueError:
            return None
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
