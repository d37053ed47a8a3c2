"""A run file as columns: query blocks, document ids and float32 scores, in trec_eval's order.

:func:`read_run_columns` parses a run with numpy over its bytes, never making a Python object per
line. The line ends are found first, then the stretch of lines of each query (galloping over the
line starts in Python, a few thousand comparisons, then every line start checked at once as
64-bit words); when some queries are not wanted (the 157 unjudged of a TREC DL run's 200), only
the wanted stretches are read further. One scan then finds every line's blanks, the document id
and score of every line are cut out as unaligned 64-bit words, and the scores are read by column
arithmetic (:func:`parse_scores`: exact to C's ``(float) atof``). Each query's lines are then
ordered as trec_eval 9.x ranks them: score as a 32-bit float descending, ties by document id
descending (byte order, ``strcmp``); a run written best first re-sorts only its ties.

Only files in the layout every TREC tool writes take this path: one blank or tab between fields,
six or more fields, ``\\n`` line ends, no comments, blank or indented lines, no control bytes
or other whitespace. Any other file, and any file with an error, is read by
:func:`~rubric.data.trec.read_run` (the line reader), so the errors (``file:line``, exit 2) and
the accepted inputs are the line reader's, whichever path is taken.

Why numpy and not pyarrow or polars: their CSV readers want one separator character and no
ragged lines, so they would need this fallback too; and after parsing, the work (qrels lookup,
ranking, measures) is array arithmetic that numpy already does, without a new core dependency
(docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rubric.data.files import GZIP_MAGIC, decode_text, open_binary
from rubric.data.trec import Run, RunScores, is_regular_file, run_from_text

#: Byte values: newline, blank, tab, ``#``, ``-``, ``+``, ``.``, ``0``, ``e``.
_NL, _SP, _TAB, _HASH, _MINUS, _PLUS, _DOT, _ZERO, _E = 10, 32, 9, 35, 45, 43, 46, 48, 101
_WIDEST_FIELD = 256  # longer ids or scores take the line reader
_POW10 = np.array([float(10**k) for k in range(300)])  # correctly rounded; exact up to 10**22
_EXACT_POWER = 22
#: Whitespace to str.split() (the line reader) that the blank scan does not split on.
#: ``_BYTE_MASKS[k]``: the first ``k`` bytes of a little- or big-endian word in memory.
_BYTE_MASKS = np.array(
    [int.from_bytes(b"\xff" * k + b"\0" * (8 - k), sys.byteorder) for k in range(9)], dtype=np.uint64
)
#: ``_TAIL_MASKS[k]``: the last ``k`` bytes of a word in memory.
_TAIL_MASKS = np.array(
    [int.from_bytes(b"\0" * (8 - k) + b"\xff" * k, sys.byteorder) for k in range(9)], dtype=np.uint64
)
Stretches = list[tuple[str, int, int]]  # query id, first line, line past the last
Parsed = tuple[str, list[str], np.ndarray, np.ndarray, np.ndarray]  # tag, queries, offsets, docs, scores
_UNICODE_SPACE = re.compile(r"[^\S \t\n]")


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
    """Rows reordered within each query as trec_eval ranks them (a no-op when already so).

    Runs are mostly written best first, with ties in an order of their own: then only the rows
    of tied scores are sorted (by document id descending), not the whole run."""
    docs, scores = run.docs, run.scores + np.float32(0.0)  # -0.0 is 0.0, as C compares them
    if len(scores) < 2:
        return RunColumns(run.name, run.queries, run.offsets, docs, scores, run.path)
    qcode = np.repeat(np.arange(len(run.queries)), np.diff(run.offsets))
    same_q = qcode[1:] == qcode[:-1]
    if np.all(~same_q | (scores[:-1] >= scores[1:])):  # best first: only ties may be out of order
        tied = same_q & (scores[:-1] == scores[1:])
        if np.any(tied & (docs[:-1] <= docs[1:])):
            group = np.cumsum(np.concatenate(([True], ~tied)))
            rows = np.flatnonzero(np.concatenate(([False], tied)) | np.concatenate((tied, [False])))
            order = rows[np.lexsort((docs[rows], -group[rows]))[::-1]]
            docs = docs.copy()
            docs[rows] = docs[order]
    else:
        order = np.lexsort((docs, scores, -qcode))[::-1]
        docs, scores = docs[order], scores[order]
    return RunColumns(run.name, run.queries, run.offsets, docs, scores, run.path)


def _words(
    bytes64: np.ndarray, starts: np.ndarray, lengths: np.ndarray, *, right: bool = False
) -> np.ndarray | None:
    """Each field ``starts[i]`` + ``lengths[i]`` bytes as one row of 64-bit words (``(n, k)``,
    the bytes in order in memory), zero-padded after the field, or before it when ``right``
    (right-aligned: a field's last byte is the row's last). The words are read unaligned from
    ``bytes64`` (:func:`_unaligned_words`); a word that would start past the text's end or
    before its start is read at the end or the start instead: it lies wholly outside its field
    (fields start at byte 8 at the earliest and have 7 bytes after them, see :func:`_parse`)
    and is masked out. None if a field is wider than :data:`_WIDEST_FIELD`."""
    width = int(lengths.max()) if lengths.size else 0
    if width > _WIDEST_FIELD:
        return None
    k = max(-(-width // 8), 1)
    out = np.empty((len(starts), k), np.uint64)
    last = len(bytes64) - 1
    if right:
        ends = starts + lengths
        for j in range(k):
            kept = np.clip(lengths - 8 * (k - 1 - j), 0, 8)
            at = np.maximum(ends - 8 * (k - j), 0)  # a word before the text lies wholly before its field
            out[:, j] = bytes64[at] & _TAIL_MASKS[kept]
    else:
        for j in range(k):
            at = np.minimum(starts + 8 * j, last)  # a word past the end lies wholly past its field
            out[:, j] = bytes64[at] & _BYTE_MASKS[np.clip(lengths - 8 * j, 0, 8)]
    return out


def parse_scores(window: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Scores from their byte rows, right-aligned and zero-padded on the left, as float32,
    rounded via double as C's ``(float) atof(s)``; None if one is not a number or not finite as
    a float32 (the line reader then reports it with its line).

    Numbers written ``[+-]digits[.digits][(e|E)[+-]digits]`` are read by arithmetic, one
    column of all rows at a time (Horner's rule): the digits make an integer ``m`` and the value
    is ``m * 10**p``, ``p`` the exponent less the digits after the point. With ``m < 2**53`` and
    ``|p| <= 22``, ``m`` and ``10**|p|`` are exact doubles and one product or quotient is the
    correctly rounded double ``strtod`` gives (Clinger's fast path). Otherwise, up to
    ``m < 10**19`` (a float's ``repr`` has 17 digits), the result is within a few units in the last
    place of that double, and so rounds to the same float32 unless it lies within a few units
    of a point halfway between two float32s. Those, longer numbers and words go through numpy's
    cast of byte strings to double, which is correctly rounded too and accepts what the line
    reader's :func:`~rubric.data.trec.to_float32` accepts."""
    n, width = window.shape
    used = min(int(lengths.max()), width) if n else 0
    columns = np.ascontiguousarray(window[:, width - used :].T)  # (used, n): sums over rows are fast
    with_e = ((columns | np.uint8(0x20)) == _E).any(axis=0)  # e or E
    values, number, exact = np.zeros(n), np.zeros(n, bool), np.zeros(n, bool)
    for rows in (np.flatnonzero(~with_e), np.flatnonzero(with_e)):
        if len(rows):
            part = columns if len(rows) == n else columns[:, rows]
            found = _numbers(part, lengths[rows], exponent=bool(with_e[rows[0]]))
            values[rows], number[rows], exact[rows] = found
    with np.errstate(over="ignore", invalid="ignore"):
        singles = values.astype(np.float32)
    inexact = np.flatnonzero(number & ~exact)
    near = np.zeros(n, bool)
    near[inexact] = _near_halfway(values[inexact], singles[inexact])
    rest = np.flatnonzero(~number | near)
    if len(rest):
        right = window[rest][:, width - used :]
        at = np.arange(used) + (used - lengths[rest])[:, None]  # left-aligned again
        left = np.where(at < used, np.take_along_axis(right, np.minimum(at, used - 1), axis=1), np.uint8(0))
        texts = np.ascontiguousarray(left).view(f"S{used}").ravel()
        try:
            exact_values = texts.astype(np.float64)
        except ValueError:
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            singles[rest] = exact_values.astype(np.float32)
    return singles if np.isfinite(singles).all() else None


def _numbers(
    columns: np.ndarray, lengths: np.ndarray, *, exponent: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values of right-aligned number texts (``columns``: one row per byte position, one
    column per text), whether each is a number this reads, and whether its value is the
    correctly rounded double (Clinger's fast path; see :func:`parse_scores`). With
    ``exponent``, each text has an ``e`` or ``E``."""
    used, n = columns.shape
    digit_values = columns - np.uint8(_ZERO)
    is_digit = digit_values <= 9
    is_dot = columns == _DOT
    is_sign = (columns == _MINUS) | (columns == _PLUS)
    first = columns[used - lengths, np.arange(n)]
    mantissa = np.zeros(n, np.float64)  # the digits as an integer, exact below 2**53
    point = np.zeros(n, np.int64)  # digits after the point
    seen_point = np.zeros(n, bool)
    if exponent:
        is_e = (columns | np.uint8(0x20)) == _E
        e_at = is_e.argmax(axis=0)  # each text has one (more: not a number, below)
        in_mantissa = np.arange(used)[:, None] < e_at
        mantissa_digits = is_digit & in_mantissa
    else:
        mantissa_digits = is_digit
    for j in range(used):  # Horner's rule, one column of all texts at a time
        digit = mantissa_digits[j]
        mantissa = np.where(digit, mantissa * 10.0 + digit_values[j], mantissa)
        point += digit & seen_point
        seen_point |= is_dot[j]
    n_digits = mantissa_digits.sum(axis=0)
    signs_at = (first == _MINUS) | (first == _PLUS)  # a sign may open the text
    power = -point
    number = (n_digits >= 1) & (mantissa < 1e19) & (is_dot.sum(axis=0) <= 1)  # 19 digits: a few roundings
    if exponent:
        exp_digits = is_digit & ~in_mantissa
        e_value = np.zeros(n, np.int64)
        for j in range(used):
            e_value = np.where(exp_digits[j], np.minimum(e_value * 10 + digit_values[j], 10**6), e_value)
        after_e = columns[np.minimum(e_at + 1, used - 1), np.arange(n)]
        e_signed = ((after_e == _MINUS) | (after_e == _PLUS)) & (e_at + 1 < used)
        power += np.where(after_e == _MINUS, -e_value, e_value)
        number &= (
            (is_e.sum(axis=0) == 1) & (exp_digits.sum(axis=0) >= 1) & ~(is_dot & ~in_mantissa).any(axis=0)
        )
        others = lengths - n_digits - exp_digits.sum(axis=0) - is_dot.sum(axis=0) - 1
        number &= (is_sign.sum(axis=0) == signs_at + e_signed) & (others == signs_at + e_signed)
    else:
        others = lengths - n_digits - is_dot.sum(axis=0)
        number &= (is_sign.sum(axis=0) == signs_at) & (others == signs_at)
    number &= np.abs(power) < len(_POW10)
    scale = _POW10[np.minimum(np.abs(power), len(_POW10) - 1)]
    with np.errstate(over="ignore"):
        values = np.where(power < 0, mantissa / scale, mantissa * scale)
    values = np.where(first == _MINUS, -values, values)
    exact = (mantissa < 2.0**53) & (np.abs(power) <= _EXACT_POWER)
    return values, number, exact


def _near_halfway(values: np.ndarray, singles: np.ndarray) -> np.ndarray:
    """Whether each double lies within 32 units in its last place of a point halfway between two
    float32s (then the correctly rounded double, a few units away, might round to the other)."""
    toward = np.where(values > singles, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32)
    halfway = (singles.astype(np.float64) + np.nextafter(singles, toward).astype(np.float64)) / 2
    with np.errstate(invalid="ignore"):
        return ~(np.abs(values - halfway) > 32 * np.spacing(np.abs(values)))


def _duplicated(qcode: np.ndarray, words: np.ndarray) -> bool:
    """Whether some query lists a document twice (a hash of each row's query and document
    words; a collision only sends the file to the line reader, which checks exactly)."""
    h = qcode.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h = (h ^ words[:, j]) * np.uint64(0x100000001B3)
            h ^= h >> np.uint64(29)
    h.sort()
    return bool(np.any(h[1:] == h[:-1]))


def _layout(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Line starts, line ends and each line's first five blanks (``(n, 5)``) of a text ending in
    a line end; None unless every line has six or more non-empty fields split by one blank or
    tab and no control byte (CR, NUL, form feed...) is in the text: the line reader decides.

    One scan finds every byte up to the blank; a run written by a TREC tool has exactly five
    blanks and a line end per line, and then those positions, in order, are the rows of an
    ``(n, 6)`` array. Otherwise (trailing text after the tag) each line's first blank is found
    by a sorted search."""
    stops = np.flatnonzero(arr <= _SP)
    kind = arr[stops]
    line_end = kind == _NL
    if np.any(~line_end & (kind != _SP) & (kind != _TAB)) or stops[0] == 0 or np.any(np.diff(stops) < 2):
        return None  # a control byte, an empty line or field, a leading or trailing blank
    ends = stops[line_end]
    n = len(ends)
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1] + 1
    if len(stops) == 6 * n and line_end[5::6].all():  # with the counts equal, each line has five
        cut = stops.reshape(n, 6)[:, :5]
    else:
        blanks = stops[~line_end]
        at = np.searchsorted(blanks, starts)
        if at[-1] + 4 >= len(blanks):
            return None
        cut = blanks[at[:, None] + np.arange(5)]
        if np.any(cut[:, 4] >= ends):
            return None  # fewer than six fields
    if np.any(arr[starts] == _HASH):
        return None  # a comment line
    return starts, ends, cut


def _stretches(text: bytes, bytes64: np.ndarray, starts: np.ndarray) -> Stretches | None:
    """The query id of each stretch of lines (first line, line past its end), for a run whose
    lines of one query are together (None: not so, or not sure).

    The end of a stretch is tried first at the length of the one before (two comparisons of a
    line's first bytes in Python), else found by galloping over the line starts (about twenty);
    then every line is checked at once: its first word(s) must be its stretch's query id and
    separator, so a stretch end found by probing is never trusted alone."""
    n = len(starts)
    found: Stretches = []
    prefixes: list[bytes] = []
    i = guess = 0
    while i < n:
        a = int(starts[i])
        cut = min(
            (p for p in (text.find(b" ", a, a + 16), text.find(b"\t", a, a + 16)) if p >= 0), default=-1
        )
        if cut <= a or cut - a > 15 or b"\n" in text[a:cut]:
            return None  # no or a long query id: the full path decides
        prefix = text[a : cut + 1]
        high = i + guess
        if not (  # most runs give every query as many lines: two probes at the last stretch's length
            guess
            and high <= n
            and text.startswith(prefix, int(starts[high - 1]))
            and (high == n or not text.startswith(prefix, int(starts[high])))
        ):
            step = 1
            while i + step < n and text.startswith(prefix, int(starts[i + step])):
                step *= 2
            low, high = i + step // 2, min(i + step, n)  # low starts with the prefix, high does not (or is n)
            while high - low > 1:
                mid = (low + high) // 2
                if text.startswith(prefix, int(starts[mid])):
                    low = mid
                else:
                    high = mid
        guess = high - i
        found.append((text[a:cut].decode(), i, high))
        prefixes.append(prefix)
        i = high
    if len({q for q, _, _ in found}) < len(found):
        return None  # a query in two stretches
    lengths = np.array([len(p) for p in prefixes], np.int64)
    expected = np.zeros((len(prefixes), 2), np.uint64)
    for row, p in enumerate(prefixes):
        expected[row] = np.frombuffer(p.ljust(16, b"\0"), np.uint64)
    lines = np.diff([0, *(b for _, _, b in found)])
    per_line = np.repeat(lengths, lines)
    seen = _words(bytes64, starts, per_line)
    if seen is None or not np.array_equal(seen, np.repeat(expected[:, : seen.shape[1]], lines, axis=0)):
        return None
    return found


def _unaligned_words(buffer: np.ndarray) -> np.ndarray:
    """The 64-bit word at every byte offset of ``buffer`` that has 8 bytes after it (a strided
    view, nothing copied)."""
    words = np.frombuffer(buffer.data, np.uint64, count=len(buffer) // 8)
    return np.lib.stride_tricks.as_strided(words, shape=(len(buffer) - 7,), strides=(1,))


def _parse(data: bytes, queries: Container[str] | None, known: Stretches | None = None) -> Parsed | None:
    """The columns of a run file in the common layout, or None for the line reader.

    The lines of each query are found first (:func:`_stretches`, or ``known``); if some queries
    are not wanted, only the other lines are read further (43 of the 200 queries of a TREC DL
    run are judged), unchecked (as trec_eval, which reads a bad number as 0). Then one scan
    finds the blanks of every line, and the documents and scores are cut out as 64-bit words.

    The words are read from the text itself, not a copy: a word that starts inside a field
    ends at most 7 bytes past it, and every field of a line in this layout has at least 7 bytes
    after it (``" 1 5 t\\n"`` after a document id, the least there is). Lines not in it are
    refused by :func:`_layout` or, in stretches of unwanted queries, not read."""
    if len(data) < 8:
        return None
    text = data if data.endswith(b"\n") else data + b"\n"
    arr = np.frombuffer(text, np.uint8)
    if arr.max() >= 128 and not _plain_utf8(text):
        return None
    bytes64 = _unaligned_words(arr)
    stretches = known
    if stretches is None:
        ends = np.flatnonzero(arr == _NL)
        starts = np.empty_like(ends)
        starts[0], starts[1:] = 0, ends[:-1] + 1
        stretches = _stretches(text, bytes64, starts)
        if queries is not None and stretches is not None and any(q not in queries for q, _, _ in stretches):
            return _wanted_only(text, starts, ends, stretches, queries)
    layout = _layout(arr)
    if layout is None:
        return None
    return _columns(text, bytes64, layout, stretches, queries)


def _wanted_only(
    text: bytes, starts: np.ndarray, ends: np.ndarray, stretches: Stretches, queries: Container[str]
) -> Parsed | None:
    """The columns of the wanted queries' stretches alone (the run's tag from its first line)."""
    first = text[: text.index(b"\n")].split()
    try:
        tag = first[5].decode() if len(first) >= 6 else None
    except UnicodeDecodeError:
        tag = None
    kept = [(q, int(starts[a]), int(ends[b - 1]) + 1, b - a) for q, a, b in stretches if q in queries]
    if not kept:
        return None if tag is None else (tag, *_EMPTY[1:])
    known, line = [], 0
    for q, _, _, n in kept:
        known.append((q, line, line + n))
        line += n
    parsed = _parse(b"".join(text[a:b] for _, a, b, _ in kept), None, known)
    return None if parsed is None or tag is None else (tag, *parsed[1:])


_EMPTY: Parsed = ("", [], np.zeros(1, np.int64), np.zeros(0, "S1"), np.zeros(0, np.float32))


def _columns(
    text: bytes,
    bytes64: np.ndarray,
    layout: tuple[np.ndarray, np.ndarray, np.ndarray],
    stretches: Stretches | None,
    queries: Container[str] | None,
) -> Parsed | None:
    """The wanted queries' documents and float32 scores, from the lines' blanks."""
    starts, ends, cut = layout
    tag = text[int(cut[0, 4]) + 1 : int(ends[0])].replace(b"\t", b" ").split(b" ")[0].decode()
    if stretches is None:  # lines of a query apart: every line's query id compared as words
        qwords = _words(bytes64, starts, cut[:, 0] - starts)
        if qwords is None:
            return None
        change = np.flatnonzero(np.any(qwords[1:] != qwords[:-1], axis=1)) + 1
        first, past = np.concatenate(([0], change)), np.concatenate((change, [len(starts)]))
        q_to = cut[first, 0].tolist()
        ids = [text[a:b].decode() for a, b in zip(starts[first].tolist(), q_to, strict=True)]
        stretches = list(zip(ids, first.tolist(), past.tolist(), strict=True))
    wanted = sorted({q for q, _, _ in stretches if queries is None or q in queries})
    code = {q: i for i, q in enumerate(wanted)}
    qcode = np.repeat([code.get(q, -1) for q, _, _ in stretches], [b - a for _, a, b in stretches])
    if len(wanted) < len({q for q, _, _ in stretches}):
        keep = qcode >= 0
        qcode, cut = qcode[keep], cut[keep]
    if not len(qcode):
        return (tag, *_EMPTY[1:])
    dwords = _words(bytes64, cut[:, 1] + 1, cut[:, 2] - cut[:, 1] - 1)
    slen = cut[:, 4] - cut[:, 3] - 1
    swords = _words(bytes64, cut[:, 3] + 1, slen, right=True)
    if dwords is None or swords is None or _duplicated(qcode, dwords):
        return None
    scores = parse_scores(swords.view(np.uint8).reshape(len(swords), -1), slen)
    if scores is None:
        return None
    docs = dwords.view(f"S{8 * dwords.shape[1]}").ravel()
    if np.any(qcode[1:] < qcode[:-1]):  # a query's lines in several stretches, or unsorted ids
        order = np.argsort(qcode, kind="stable")
        qcode, docs, scores = qcode[order], docs[order], scores[order]
    offsets = np.concatenate(([0], np.cumsum(np.bincount(qcode, minlength=len(wanted))))).astype(np.int64)
    return tag, wanted, offsets, docs, scores


def _plain_utf8(data: bytes) -> bool:
    """Whether non-ASCII text is UTF-8 without whitespace the blank scan would not split on
    (``str.split``, the line reader's, splits on U+00A0, U+2003 and the like)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _UNICODE_SPACE.search(text) is None


def read_run_columns(
    path: str | Path, name: str | None = None, queries: Container[str] | None = None
) -> RunColumns:
    """Read a run file (plain or gzip) into columns; ``name`` defaults to its first line's tag,
    ``queries`` keeps only those queries (as :func:`~rubric.data.trec.read_run`)."""
    data = _plain_bytes(path)
    if data is None:
        with open_binary(path) as f:
            data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    parsed = _parse(data, queries)
    if parsed is None:  # the line reader, on the bytes already read (a pipe cannot be read twice)
        return columns_of(run_from_text(path, decode_text(path, data), name=name, queries=queries))
    tag, wanted, offsets, docs, scores = parsed
    return _ranked(RunColumns(name or tag, wanted, offsets, docs, scores, Path(path)))


def _plain_bytes(path: str | Path) -> bytes | None:
    """A regular uncompressed file's bytes in one read (``open_binary``'s buffered reader
    copies them once more, 2-3 ms of an 8 MB run); None for gzip (known from its first two
    bytes, before the rest is read), pipes, standard input and files that cannot be read
    (:func:`~rubric.data.files.open_binary` reads those and names the error)."""
    if not is_regular_file(Path(path)):
        return None
    try:
        with open(path, "rb", buffering=0) as f:
            if f.read(2) == GZIP_MAGIC:
                return None
            f.seek(0)
            return f.readall()
    except OSError:
        return None


def columns_of(run: Run) -> RunColumns:
    """A run read by the line reader, as columns."""
    return RunColumns.from_scores(run.name, run.scores, run.path)
