"""The columnar run reader gives what the line reader gives: the same rankings and float32
scores, the same errors (file:line), on every layout, gzip included."""

from __future__ import annotations

import decimal
import gzip
import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubric.data.run_columns import RunColumns, parse_scores, read_run_columns
from rubric.data.trec import read_run
from rubric.errors import UserError


def _same(a: RunColumns, b: RunColumns) -> bool:
    return (
        a.name == b.name
        and a.queries == b.queries
        and np.array_equal(a.offsets, b.offsets)
        and a.docs.tolist() == b.docs.tolist()
        and np.array_equal(a.scores, b.scores)
    )


def _both(path, queries=None):
    lines = read_run(path, queries=queries)
    return read_run_columns(path, queries=queries), RunColumns.from_scores(lines.name, lines.scores)


def _halfway_neighbours() -> list[str]:
    """Doubles a unit in the last place from points halfway between two float32s, in full."""
    out = []
    for f in (1.0, 0.1, 1234.5678, 3.0e-5):
        single = np.float32(f)
        upper = np.nextafter(single, np.float32(np.inf))
        half = (float(single) + float(upper)) / 2
        for d in (np.nextafter(half, -np.inf), half, np.nextafter(half, np.inf)):
            out.append(repr(float(d)))
            out.append(f"{float(d):.17e}")
    return out


SCORE_TEXTS = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.6f}"),
    st.floats(-1e30, 1e30, allow_nan=False).map(lambda x: f"{x:.17g}"),
    st.floats(-1e30, 1e30, allow_nan=False).map(lambda x: f"{x:e}"),
    st.sampled_from(
        ["1", "-0", "0.0", "+3.5", ".5", "5.", "1E3", "2.5e-3", "00012.500", *_halfway_neighbours()]
    ),
)
LAYOUT = st.sampled_from(
    ["plain", "tabs", "double blank", "trailing text", "comment", "crlf", "blank line", "a line apart"]
)


@st.composite
def run_texts(draw):
    queries = draw(
        st.lists(st.sampled_from(["1", "2", "10", "q3", "1037798"]), min_size=1, max_size=4, unique=True)
    )
    layout = draw(LAYOUT)
    lines = []
    for q in queries:
        docs = draw(
            st.lists(
                st.sampled_from(["d1", "d2", "d10", "a#1", "D2", "z"]), min_size=1, max_size=6, unique=True
            )
        )
        for rank, d in enumerate(docs, start=1):
            cols = [q, "Q0", d, str(rank), draw(SCORE_TEXTS), "tag1"]
            sep = {"tabs": "\t", "double blank": "  "}.get(layout, " ")
            line = sep.join(cols) + (" extra words" if layout == "trailing text" else "")
            lines.append(line)
    if layout == "a line apart" and len(lines) > 2:  # a query's line among another query's lines
        moved = lines.pop(draw(st.integers(0, len(lines) - 1)))
        lines.insert(draw(st.integers(0, len(lines))), moved)
    if layout == "comment":
        lines.insert(0, "# a comment")
    if layout == "blank line":
        lines.insert(1, "")
    end = "\r\n" if layout == "crlf" else "\n"
    return end.join(lines) + end


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=run_texts(), gz=st.booleans(), keep=st.sampled_from([None, frozenset({"1", "q3"})]))
def test_columns_equal_the_line_reader(tmp_path, text, gz, keep):
    path = tmp_path / ("run.gz" if gz else "run.txt")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    ours, theirs = _both(path, keep)
    assert _same(ours, theirs)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 Q0 d2 2 0.5", "a run line has 6 columns"),
        ("1 Q0 d2 2 abc run", "score must be a number"),
        ("1 Q0 d2 2 nan run", "finite number"),
        ("1 Q0 d2 2 1e39 run", "finite number"),
        ("1 Q0 d1 2 0.5 run", "document d1 appears twice for query 1"),
    ],
)
def test_a_bad_line_is_the_line_reader_s_error_with_its_line(tmp_path, line, message):
    path = tmp_path / "run.txt"
    path.write_text(f"1 Q0 d1 1 1.0 run\n{line}\n")
    with pytest.raises(UserError, match=message) as ours:
        read_run_columns(path)
    with pytest.raises(UserError) as theirs:
        read_run(path)
    assert str(ours.value) == str(theirs.value)
    assert f"{path}:2" in str(ours.value)


def test_scores_round_as_c_does_near_float32_halfway_points():
    texts = _halfway_neighbours()
    assert _parsed(texts) == [_c_float(t) for t in texts]


def _c_float(text: str) -> float:
    """C's ``(float) atof(text)``: the correctly rounded double, then rounded to float32."""
    return struct.unpack("f", struct.pack("f", float(text)))[0]


def _parsed(texts: list[str]) -> list[float] | None:
    """:func:`parse_scores` of ``texts`` in right-aligned rows, as the reader cuts them."""
    width = -(-max(map(len, texts)) // 8) * 8
    window = np.zeros((len(texts), width), np.uint8)
    for i, t in enumerate(texts):
        window[i, width - len(t) :] = np.frombuffer(t.encode(), np.uint8)
    got = parse_scores(window, np.array([len(t) for t in texts]))
    return None if got is None else got.tolist()


DIGITS = st.text("0123456789", min_size=1, max_size=24)
DECIMALS = st.builds(
    lambda sign, whole, point, frac, e: sign + whole + point + frac + e,
    st.sampled_from(["", "-", "+"]), DIGITS, st.sampled_from([".", ""]), st.text("0123456789", max_size=24),
    st.sampled_from(["", "e5", "E-7", "e+22", "e-23", "e-45", "e38", "e-310", "e400", "e"]),
)  # fmt: skip


def _float32_halfway_texts() -> list[str]:
    """Points halfway between two float32s, exactly and cut to 16..19 digits: where a double a
    few units off rounds the other way."""
    out = []
    for f in (1.0, 0.1, 3.0e-5, 7.25, 1234.5678, 6.1e-39):
        single = np.float32(f)
        half = (
            decimal.Decimal(float(single))
            + (
                decimal.Decimal(float(np.nextafter(single, np.float32(np.inf))))
                - decimal.Decimal(float(single))
            )
            / 2
        )
        for digits in (16, 17, 18, 19):
            for rounding in (decimal.ROUND_DOWN, decimal.ROUND_UP):
                ctx = decimal.Context(prec=digits, rounding=rounding)
                out += [f"{ctx.plus(half):f}", f"{ctx.plus(half):e}"]
    return out


def test_scores_at_float32_halfway_points_cut_to_19_digits():
    texts = _float32_halfway_texts()
    assert _parsed(texts) == [_c_float(t) for t in texts]


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.one_of(SCORE_TEXTS, DECIMALS), min_size=1, max_size=30))
def test_scores_are_c_s_float_of_the_correctly_rounded_double(texts):
    """Every digit count (up to 48, past the 15 of the exact path and the 19 of the near one),
    signs, points and exponents, mixed in one run as runs mix them."""
    try:
        expected = [_c_float(t) for t in texts]
    except ValueError:  # not a number ("1e"): the line reader reports it
        expected = [math.nan]
    assert _parsed(texts) == (expected if all(map(math.isfinite, expected)) else None)


@pytest.mark.parametrize("bad", ["abc", "1.2.3", "--1", "1-", ".", "-", "1e", "0x10"])
def test_a_score_that_is_not_a_number_is_refused(bad):
    assert _parsed(["1.5", bad]) is None


def test_ties_rank_by_document_id_descending_and_minus_zero_is_zero(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 -0 r\n1 Q0 c 2 0.0 r\n1 Q0 b 3 0.1 r\n1 Q0 d 4 0.100000001 r\n")
    run = read_run_columns(path)
    assert run.docs.tolist() == [b"d", b"b", b"c", b"a"]  # 0.1 and 0.100000001 are one float32


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "3"]),
            st.sampled_from(["a", "b", "c", "d", "e"]),
            st.sampled_from([0.5, 0.25, 0.0, -0.0, 1.0, 3.0]),
        ),  # fmt: skip
        min_size=1,
        max_size=40,
        unique_by=lambda r: (r[0], r[1]),
    ),
    best_first=st.booleans(),
)
def test_rankings_are_trec_eval_s_order_whatever_the_file_s_order(tmp_path_factory, rows, best_first):
    """Score descending, ties by document id descending (a sort written out in Python), from a
    file written best first with ties in any order, or in any order at all."""
    if best_first:
        rows = sorted(rows, key=lambda r: (r[0], -r[2]))
    path = tmp_path_factory.mktemp("run") / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in rows))
    run = read_run_columns(path)
    for i, q in enumerate(run.queries):
        expected = sorted(((s + 0.0, d) for qq, d, s in rows if qq == q), reverse=True)
        docs = [d.decode() for d in run.docs[run.block(i)]]
        got = list(zip(run.scores[run.block(i)].tolist(), docs, strict=True))
        assert got == expected


@pytest.mark.parametrize(
    "text",
    [
        "1 Q 1 1 5 t\n",  # the shortest line there is, alone
        "1 Q 1 1 5 t",  # without its line end
        "1 Q0 a 1 0.5 t\n1 Q 1 1 5 t\n",  # a short last line after a longer one
        "q123456789012 Q0 a 1 0.5 t\nq123456789012 Q b 2 4 t\n",  # a long query id, short last line
        "1 Q0 a-long-document-id-of-forty-bytes-0000 1 0.5 t\n1 Q b 2 4 t\n",  # long words first
        "1 Q0 d 1 " + "1" * 30 + ".5 t\n",  # a score longer than what comes before it
        "10 Q0 d1 1 1.5 t\n2 Q0 d2 1 0.5 t\n10 Q0 d3 2 0.5 t\n",  # a query's lines apart
        # stretches of one length, and a line of query 1 inside query 2's, where the two probes
        # at the last stretch's length do not look
        "1 Q0 a 1 4 t\n1 Q0 b 2 3 t\n1 Q0 c 3 2 t\n1 Q0 d 4 1 t\n2 Q0 a 1 4 t\n2 Q0 b 2 3 t\n"
        "1 Q0 e 5 0 t\n2 Q0 c 3 2 t\n10 Q0 a 1 1 t\n",
    ],
)
@pytest.mark.parametrize("keep", [None, frozenset({"1", "10"})])
def test_words_near_the_ends_of_the_text_are_read_as_the_line_reader_reads(tmp_path, text, keep):
    """Fields are read as 64-bit words from the text itself: the first and last bytes of a file,
    and short last lines, must not shift what is read."""
    path = tmp_path / "run.txt"
    path.write_text(text)
    ours, theirs = _both(path, keep)
    assert _same(ours, theirs)
