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
        return _ranked(name, queries, offsets, doc_array, np.array(values, dtype=np.float32), path)


def _ranked(
    name: str,
    queries: list[str],
    offsets: np.ndarray,
    docs: np.ndarray,
    scores: np.ndarray,
    path: Path | None,
) -> RunColumns:
    """Rows reordered within each query as trec_eval ranks them (a no-op when already so)."""
    scores = scores + np.float32(0.0)  # -0.0 is 0.0, as C compares them
    n = len(scores)
    if n > 1:
        qcode = np.repeat(np.arange(len(queries)), np.diff(offsets))
        same_q = qcode[1:] == qcode[:-1]
        higher = scores[:-1] > scores[1:]
        tie_ok = (scores[:-1] == scores[1:]) & (docs[:-1] > docs[1:])
        if not np.all(~same_q | higher | tie_ok):
            order = np.lexsort((docs, scores, -qcode))[::-1]
            docs, scores = docs[order], scores[order]
    return RunColumns(name, queries, offsets, docs, scores, path)


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

    A decimal ``[sign]digits[.digits][e[sign]digits]`` of at most 18 significant digits is
    ``mantissa / 10**scale``: exact as a double when the mantissa is below 2**53 and the scale
    within 0..22 (one correctly rounded division of two exact doubles, as ``strtod`` rounds);
    otherwise within two units in the last place, which gives the float32 of the exact value
    unless it lies a few units from a point halfway between two float32s. Those, and other
    spellings (``inf``, ``0x1p3``), are converted one by one as the line reader converts them.
    """
    n, width = window.shape
    columns = np.arange(width)
    first = window[:, 0]
    sign = (first == _MINUS) | (first == _PLUS)
    inside = (columns >= sign[:, None]) & (columns < lengths[:, None])
    is_e = inside & ((window == 101) | (window == 69))
    e_at = np.where(is_e.any(axis=1), is_e.argmax(axis=1), lengths)
    is_digit = inside & (window >= _ZERO) & (window <= _ZERO + 9)
    in_mantissa = columns < e_at[:, None]
    exp_sign_at = np.where(np.take_along_axis(window, np.minimum(e_at + 1, width - 1)[:, None], 1)[:, 0] == _MINUS,
                           e_at + 1, -1)  # fmt: skip
    exp_plus = np.take_along_axis(window, np.minimum(e_at + 1, width - 1)[:, None], 1)[:, 0] == _PLUS
    exp_sign_at = np.where(exp_plus, e_at + 1, exp_sign_at)
    is_dot = inside & in_mantissa & (window == _DOT)
    mantissa_digit = is_digit & in_mantissa
    exp_digit = is_digit & ~in_mantissa
    well_formed = np.all(
        ~inside | mantissa_digit | is_dot | exp_digit | is_e | (columns == exp_sign_at[:, None]), axis=1
    )
    has_e = e_at < lengths
    exp_digits = exp_digit.sum(axis=1)
    plain = (
        well_formed
        & (is_dot.sum(axis=1) <= 1)
        & (is_e.sum(axis=1) <= 1)
        & (mantissa_digit.sum(axis=1) >= 1)
        & (~has_e | ((exp_digits >= 1) & (exp_digits <= 3)))
    )
    mantissa = np.zeros(n, np.int64)
    exponent = np.zeros(n, np.int64)
    fraction = np.zeros(n, np.int64)
    significant = np.zeros(n, np.int64)
    started = np.zeros(n, bool)
    after_dot = np.zeros(n, bool)
    digit_values = window.T.astype(np.int64) - _ZERO
    for j in range(width):
        d = digit_values[j]
        is_m, is_x = mantissa_digit[:, j], exp_digit[:, j]
        started |= is_m & (d > 0)
        significant += started & is_m
        keep = is_m & (significant <= 18)
        mantissa = np.where(keep, mantissa * 10 + d, mantissa)
        fraction += is_m & after_dot
        after_dot |= is_dot[:, j]
        exponent = np.where(is_x, exponent * 10 + d, exponent)
    plain &= significant <= 18
    exponent = np.where(exp_sign_at >= 0, np.where(exp_plus, exponent, -exponent), exponent)
    scale = np.where(plain, fraction - exponent, 0)
    plain &= np.abs(scale) <= 2 * (len(_POW10) - 1)
    scale = np.where(plain, scale, 0)
    down = np.clip(scale, 0, None)
    values = mantissa.astype(np.float64)
    values = values / _POW10[np.minimum(down, 22)] / _POW10[np.maximum(down - 22, 0)]
    up = np.clip(-scale, 0, None)
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


def _parse(
    data: bytes, queries: Container[str] | None
) -> tuple[str, list[str], np.ndarray, np.ndarray, np.ndarray] | None:
    """The columns of a run file in the common layout, or None for the line reader."""
    if not data:
        return None
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
    return _ranked(name or tag, wanted, offsets, docs, scores, Path(path))


def columns_of(run: Run) -> RunColumns:
    """A run read by the line reader, as columns."""
    return RunColumns.from_scores(run.name, run.scores, run.path)
