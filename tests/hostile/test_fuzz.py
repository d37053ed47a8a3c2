"""Fuzzing the readers with hostile *structured* input (hypothesis, derandomized: the same examples
on every run, so CI is reproducible): grades of any sign and size, ids with spaces, ``#`` and
unicode, empty fields, huge numbers, NaN, ``null`` where text belongs, truncated gzip.

The property, for every reader: a documented reading or one :class:`UserError` that starts with
the file's name, never another exception, and the input file unchanged. Qrels and runs go on
through trec_eval (pytrec_eval), where a bad grade once meant a segmentation fault: that part runs
in a child process, so a signal is seen as one. The real CLI is fuzzed there too (the leaderboard
and `bank import`, as `rubric.cli.main.main` in the child, exit 0 or 2 and no traceback).

tests/hostile/test_reader_properties.py mutates valid files byte by byte; this file generates
files field by field.
"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.cli import cli_env
from rubric.bank.importers import read_genq
from rubric.data.collection import load_texts
from rubric.data.jsonl import read_bank, read_passages
from rubric.data.queries import read_queries
from rubric.data.trec import MAX_GRADE, RELEVANCE_LIMIT, read_qrels, read_run
from rubric.errors import UserError
from rubric.verify.review import read_review

FUZZ = settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# --- hostile fields -----------------------------------------------------------------------------

unicode_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
ids = st.one_of(
    st.sampled_from(
        ["q1", "d1", "1037798", "#", "#q1", "a b", "", "\u00e9t\u00e9", "\u6587\u6863", "x\u200by"]
    ),
    unicode_text,
)
huge = st.sampled_from(
    ["2147483647", "2147483648", "-2147483648", "-2147483649", "1" + "0" * 40, "-" + "9" * 30]
)
numbers = st.one_of(
    st.integers(-(2**40), 2**40).map(str),
    st.integers(-5, 5).map(str),
    huge,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        ["nan", "NaN", "inf", "-inf", "1e39", "1e400", "-0", "+3", "3.0", "3.5", "0x10", "", "1_000"]
    ),
)
separators = st.sampled_from([" ", "\t", "  ", " \t "])


def _columns(*fields: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """One line of whitespace-separated columns; now and then a column too few or too many."""
    n = len(fields)
    spaced = st.tuples(st.lists(separators, min_size=n, max_size=n), st.tuples(*fields)).map(
        lambda t: "".join(f + sep for f, sep in zip(t[1], t[0], strict=True)).rstrip(" ")
    )
    short = st.tuples(*fields).map(lambda t: " ".join(t[:-1]))
    long = st.tuples(*fields).map(lambda t: " ".join((*t, "x")))
    return spaced | short | long


qrels_lines = _columns(ids, st.sampled_from(["0", "Q0", "1", ""]), ids, numbers)
run_lines = _columns(ids, st.sampled_from(["Q0", "0", ""]), ids, numbers, numbers, ids)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | unicode_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(unicode_text, inner, max_size=3),
    max_leaves=8,
)
hostile_values = st.one_of(
    st.none(),
    st.sampled_from([0, -2, 2**63, -(2**70), 1e308, True, "", " ", "#", "None", "\u6587"]),
    st.floats(),
    unicode_text,
    json_values,
)


def _file(folder: Path, text: str | bytes, compress: bool = False, cut: int | None = None) -> Path:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if compress:
        data = gzip.compress(data, mtime=0)
        if cut is not None:
            data = data[: cut % (len(data) + 1)]
    path = folder / ("input.gz" if compress else "input")
    path.write_bytes(data)
    return path


def _read(reader: Callable[[Path], object], path: Path) -> object | None:
    """The reading, or None after a :class:`UserError` naming the file; the file unchanged."""
    before = path.read_bytes()
    try:
        return reader(path)
    except UserError as e:
        assert str(e).startswith(str(path)), str(e)
        return None
    finally:
        assert path.read_bytes() == before


# --- TREC qrels and runs ------------------------------------------------------------------------


@FUZZ
@given(
    lines=st.lists(qrels_lines, min_size=1, max_size=8), compress=st.booleans(), cut=st.none() | st.integers()
)
def test_qrels(tmp_path, lines, compress, cut):
    qrels = _read(read_qrels, _file(tmp_path, "\n".join(lines) + "\n", compress, cut))
    if qrels is None:
        return
    assert isinstance(qrels, dict) and qrels
    for docs in qrels.values():  # documented: whole numbers from -2^31 (a C int) to MAX_GRADE
        assert all(isinstance(g, int) and -RELEVANCE_LIMIT <= g <= MAX_GRADE for g in docs.values())


@FUZZ
@given(
    lines=st.lists(run_lines, min_size=1, max_size=8), compress=st.booleans(), cut=st.none() | st.integers()
)
def test_runs(tmp_path, lines, compress, cut):
    run = _read(read_run, _file(tmp_path, "\n".join(lines) + "\n", compress, cut))
    if run is None:
        return
    for docs in run.scores.values():  # documented: finite 32-bit floats
        assert all(math.isfinite(s) and abs(s) < 3.5e38 for s in docs.values())


# --- topics -------------------------------------------------------------------------------------

topics_tsv = st.lists(st.tuples(ids, separators, unicode_text).map("".join), min_size=1, max_size=6).map(
    "\n".join
)
topics_json = st.dictionaries(ids, hostile_values, min_size=1, max_size=5).map(json.dumps)
topics_jsonl = st.lists(
    st.fixed_dictionaries({}, optional={"qid": hostile_values, "query_id": ids, "text": hostile_values}),
    min_size=1,
    max_size=4,
).map(lambda rs: "\n".join(json.dumps(r) for r in rs))


@FUZZ
@given(text=topics_tsv | topics_json | topics_jsonl, compress=st.booleans())
def test_topics(tmp_path, text, compress):
    queries = _read(read_queries, _file(tmp_path, text, compress))
    if queries is None:
        return
    assert all(isinstance(q, str) and isinstance(t, str) for q, t in queries.items())  # never a None


# --- JSON lines: passages, banks, reviews -------------------------------------------------------


def _passage(values: dict) -> dict:
    base = {"paragraph_id": "d1", "text": "a passage", "paragraph_data": {"judgments": [], "rankings": []}}
    return {**base, **values}


passage_lines = st.tuples(
    hostile_values | ids,
    st.lists(
        st.dictionaries(
            st.sampled_from(["paragraph_id", "text", "paragraph_data", "exam_grades", "grades", "x"]),
            hostile_values,
            max_size=2,
        ).map(_passage),
        max_size=3,
    ),
).map(lambda t: json.dumps(list(t), allow_nan=True))
bank_lines = st.dictionaries(
    st.sampled_from(["query_id", "query_text", "items", "facet_id", "test_collection", "info"]),
    hostile_values,
    max_size=3,
).map(
    lambda d: json.dumps(
        {"query_id": "q1", "items": [{"query_id": "q1", "question_id": "q1/a", "question_text": "why?"}], **d}
    )
)


@FUZZ
@given(
    lines=st.lists(passage_lines, min_size=1, max_size=3),
    compress=st.booleans(),
    cut=st.none() | st.integers(),
)
def test_passages(tmp_path, lines, compress, cut):
    _read(lambda p: list(read_passages(p)), _file(tmp_path, "\n".join(lines) + "\n", compress, cut))


@FUZZ
@given(
    lines=st.lists(bank_lines, min_size=1, max_size=3), compress=st.booleans(), cut=st.none() | st.integers()
)
def test_banks(tmp_path, lines, compress, cut):
    banks = _read(lambda p: list(read_bank(p)), _file(tmp_path, "\n".join(lines) + "\n", compress, cut))
    for bank in banks or []:
        assert isinstance(bank.query_text, str | None) and bank.query_text != "None"


@FUZZ
@given(
    fields=st.dictionaries(
        st.sampled_from(["version", "reviewer", "source", "actions", "created"]), hostile_values, max_size=3
    ),
    action=st.dictionaries(
        st.sampled_from(["type", "query_id", "paragraph_id", "item_id", "grade", "text"]),
        hostile_values,
        max_size=4,
    ),
)
def test_reviews(tmp_path, fields, action):
    review = {"version": 1, "reviewer": "a", "actions": [{"type": "grade", **action}], **fields}
    _read(read_review, _file(tmp_path, json.dumps(review)))


# --- importers: genq question sets, RankLLM candidates ------------------------------------------


@FUZZ
@given(
    title=hostile_values,
    questions=st.lists(hostile_values | unicode_text, max_size=3) | hostile_values,
    qid=ids,
    facet=ids,
)
def test_genq(tmp_path, title, questions, qid, facet):
    data = {qid: {facet: {"title": title, "facet": facet, "questions": questions}}}
    banks = _read(lambda p: read_genq(p), _file(tmp_path, json.dumps(data)))
    for bank in banks or []:  # documented: the title's text, or none; never the word None
        assert bank.query_text == (title if isinstance(title, str) else "")


@FUZZ
@given(
    hits=st.lists(
        st.dictionaries(
            st.sampled_from(["docid", "content", "score", "rank", "title"]), hostile_values, max_size=4
        ),
        max_size=3,
    )
    | hostile_values,
    query=hostile_values,
)
def test_rankllm_candidates(tmp_path, hits, query):
    path = _file(tmp_path, json.dumps([{"query": query, "hits": hits}]))
    texts = _read(lambda p: load_texts([p]), path)
    assert texts is None or all(isinstance(t, str) for t in texts.values())  # type: ignore[union-attr]


# --- through trec_eval and the CLI, in a child process (a signal is a failure) -----------------

CHILD = "N = 200\n" + textwrap.dedent(
    """
    import contextlib, io, sys, tempfile
    from pathlib import Path
    from hypothesis import given, settings, strategies as st
    from rubric.cli.main import main
    from rubric.data.trec import read_qrels, read_run
    from rubric.errors import UserError
    from rubric.evaluate.measures import parse_measures
    from rubric.evaluate.treceval import Evaluator, TrecEvalSettings

    grades = st.integers(-(2**31), 2**16 - 1) | st.integers(-3, 3)  # to MAX_GRADE; above: exit 2
    docs = st.sampled_from(["d1", "d2", "d3", "d4"])
    qrels = st.dictionaries(
        st.sampled_from(["q1", "q2", "q3"]), st.dictionaries(docs, grades, min_size=1), min_size=1
    )
    runs = st.dictionaries(
        st.sampled_from(["q1", "q2", "q4"]),
        st.dictionaries(docs, st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1),
        min_size=1,
    )
    any_qrels = st.dictionaries(  # above MAX_GRADE too: exit 2
        st.sampled_from(["q1", "q2"]),
        st.dictionaries(docs, grades | st.integers(-(2**31), 2**31 - 1), min_size=1),
        min_size=1,
    )
    MEASURES = parse_measures(["official,ndcg_cut.10,bpref,infAP,Judged@2,RR(rel=2)@10,ERR@10"])
    folder = Path(tempfile.mkdtemp())

    def cli(*args):
        err = io.StringIO()
        sys.argv = ["rubric", *map(str, args)]
        with contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as e:
                code = e.code
        assert code in (0, 2), (code, args, err.getvalue())
        assert "Traceback" not in err.getvalue(), err.getvalue()

    @settings(max_examples=N, derandomize=True, database=None, deadline=None)
    @given(qrels=qrels, run=runs, judged_only=st.booleans(), level=st.integers(1, 3))
    def library(qrels, run, judged_only, level):
        Evaluator(qrels, MEASURES, TrecEvalSettings(judged_only=judged_only, level=level)).evaluate(run)

    @settings(max_examples=N // 8, derandomize=True, database=None, deadline=None)
    @given(qrels=any_qrels, run=runs)
    def leaderboard(qrels, run):
        (folder / "q").write_text(
            "".join(f"{q} 0 {d} {g}\\n" for q, ds in qrels.items() for d, g in ds.items())
        )
        (folder / "r").write_text(
            "".join(f"{q} Q0 {d} 1 {s} r\\n" for q, ds in run.items() for d, s in ds.items())
        )
        run_file = f"A={folder / 'r'}"
        q, o = folder / "q", folder / "o"
        cli("evaluate", "leaderboard", "--qrels", q, "--run", run_file, "-m", "official", "-o", o)

    @settings(max_examples=N // 8, derandomize=True, database=None, deadline=None)
    @given(title=st.none() | st.integers() | st.text(max_size=5), questions=st.lists(st.text(max_size=5)))
    def bank_import(title, questions):
        import json
        (folder / "g.json").write_text(json.dumps({"q1": {"f1": {"title": title, "questions": questions}}}))
        cli("bank", "import", folder / "g.json", "-o", folder / "b.jsonl")

    library()
    leaderboard()
    bank_import()
    """
)


@pytest.mark.subprocess
def test_trec_eval_and_the_cli_never_crash_on_any_grade():
    """Any 32-bit grade (all negative for a query included), any -l and -J, through every kind of
    measure; then the leaderboard and `bank import` through the CLI."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
    )
    assert child.returncode == 0, (child.returncode, child.stderr[-3000:])
