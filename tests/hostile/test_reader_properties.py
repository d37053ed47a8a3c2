"""Property-based checks of every reader (hypothesis): valid files read back equal to what was
written, and any garbage or mutation of a valid file gives a result or a :class:`UserError` that
starts with the file's name; never another exception."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubric.bank.generate import read_facets
from rubric.bank.importers import read_plain
from rubric.data.answers import read_answers
from rubric.data.collection import load_texts
from rubric.data.jsonl import iter_json_lines, read_bank, read_passages, write_bank, write_passages
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList, TestBank
from rubric.data.queries import read_queries, write_queries
from rubric.data.trec import read_qrels, read_run, write_qrels, write_run
from rubric.errors import UserError
from rubric.evaluate.alpha_ndcg import read_item_qrels
from rubric.evaluate.correlation import read_official
from rubric.evaluate.nuggets import read_assigned

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

ids = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-/", min_size=1, max_size=12
)
float32s = st.floats(allow_nan=False, allow_infinity=False, width=32)
words = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), max_size=40
)


# --- valid files read back equal --------------------------------------------------------------


@SETTINGS
@given(
    scores=st.dictionaries(
        ids, st.dictionaries(ids, float32s, min_size=1, max_size=8), min_size=1, max_size=6
    )
)
def test_runs_round_trip(tmp_path, scores):
    path = tmp_path / "run.txt"
    write_run(path, scores, tag="sys")
    run = read_run(path)
    assert run.name == "sys"
    assert run.scores == {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in scores.items()}
    some = set(list(scores)[::2])
    assert read_run(path, queries=some).scores == {q: v for q, v in run.scores.items() if q in some}


@SETTINGS
@given(
    qrels=st.dictionaries(ids, st.dictionaries(ids, st.integers(-3, 10), min_size=1, max_size=8), min_size=1)
)
def test_qrels_round_trip(tmp_path, qrels):
    path = tmp_path / "qrels.txt"
    write_qrels(path, qrels)
    assert read_qrels(path) == qrels


@SETTINGS
@given(
    queries=st.dictionaries(ids, words.filter(lambda t: t.strip()), min_size=1, max_size=8),
    fmt=st.sampled_from(["json", "jsonl", "tsv"]),
    compress=st.booleans(),
)
def test_queries_round_trip(tmp_path, queries, fmt, compress):
    path = tmp_path / ("q.gz" if compress else "q.txt")
    write_queries(path, queries, fmt)
    expected = {q: " ".join(t.split()) for q, t in queries.items()} if fmt == "tsv" else queries
    assert read_queries(path) == expected


passages = st.builds(
    lambda pid, text, extra: FullParagraphData(paragraph_id=pid, text=text, **extra),
    ids,
    words,
    st.dictionaries(
        st.sampled_from(["note", "x_score"]), st.one_of(words, float32s, st.integers()), max_size=2
    ),
)
queries_with_passages = st.dictionaries(
    ids,
    st.lists(passages, min_size=1, max_size=4, unique_by=lambda p: p.paragraph_id),
    min_size=1,
    max_size=5,
)


@SETTINGS
@given(data=queries_with_passages, compress=st.booleans())
def test_passages_round_trip(tmp_path, data, compress):
    path = tmp_path / ("p.jsonl.gz" if compress else "p.jsonl")
    queries = [QueryWithFullParagraphList(queryId=q, paragraphs=ps) for q, ps in data.items()]
    write_passages(path, queries)
    assert [q.to_json() for q in read_passages(path)] == [q.to_json() for q in queries]


@SETTINGS
@given(
    banks=st.dictionaries(
        ids,
        st.lists(st.tuples(ids, words), max_size=4, unique_by=lambda t: t[0]),
        min_size=1,
        max_size=5,
    )
)
def test_banks_round_trip(tmp_path, banks):
    path = tmp_path / "bank.jsonl.gz"
    written = [
        TestBank(
            query_id=q,
            query_text="t",
            items=[{"query_id": q, "question_id": f"{q}/{i}", "question_text": text} for i, text in items],
        )
        for q, items in banks.items()
    ]
    write_bank(path, written)
    assert [b.to_json() for b in read_bank(path)] == [b.to_json() for b in written]


# --- garbage and mutations never give a traceback ---------------------------------------------

READERS: dict[str, Callable[[Path], object]] = {
    "run": lambda p: read_run(p),
    "run (judged queries)": lambda p: read_run(p, queries={"q1", "q2"}),
    "qrels": read_qrels,
    "queries": read_queries,
    "passages": lambda p: list(read_passages(p)),
    "bank": lambda p: list(read_bank(p)),
    "collection": lambda p: load_texts([p]),
    "json lines": lambda p: list(iter_json_lines(p)),
    "item qrels": read_item_qrels,
    "official leaderboard": lambda p: read_official(p, "map"),
    "RAG answers": read_answers,
    "plain bank list": lambda p: read_plain(p, "nuggets"),
    "facets": read_facets,
    "assigned nuggets": read_assigned,
}

SEEDS = [
    b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d1 1 0.5 sys\n",
    b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n",
    b"q1\thow do bees make honey\nq2\twhy is the sky blue\n",
    b'{"q1": "bees", "q2": "sky"}\n',
    b'["q1", [{"paragraph_id": "d1", "text": "x", "paragraph_data": {"judgments": [], "rankings": []}}]]\n',
    b'{"query_id": "q1", "items": [{"query_id": "q1", "question_id": "q1/a", "question_text": "why?"}]}\n',
    b'{"run_id": "r", "topic_id": "q1", "answer": [{"text": "a.", "citations": [0]}], "references": []}\n',
    b'{"run_id": "r", "query_id": "q1", "nuggets": [{"importance": "vital", "assignment": "support"}]}\n',
    b"run\tmap\nr1\t0.5\nr2\t0.25\n",
    b"q1\tf1\tfacet one\n",
]


def _mutate(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    for position, delete, insert in edits:
        at = position % (len(data) + 1)
        data = data[:at] + insert + data[at + delete :]
    return data


edits = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.integers(0, 4),
        st.binary(max_size=4)
        | st.sampled_from(
            [b"\t", b"\n", b" ", b'"', b"{", b"[", b"NaN", b"1e39", b"\xef\xbb\xbf", b"\xff", b"#", b"\r"]
        ),
    ),
    max_size=6,
)


def _check(reader: Callable[[Path], object], path: Path) -> None:
    try:
        reader(path)
    except UserError as e:
        assert str(e).startswith(str(path)), str(e)  # file or file:line first


@pytest.mark.parametrize("name", list(READERS))
@SETTINGS
@given(seed=st.sampled_from(SEEDS), edits=edits, compress=st.booleans())
def test_mutated_files_give_a_result_or_a_user_error(tmp_path, name, seed, edits, compress):
    data = _mutate(seed, edits)
    path = tmp_path / "mutated"
    path.write_bytes(gzip.compress(data) if compress else data)
    _check(READERS[name], path)


@pytest.mark.parametrize("name", list(READERS))
@SETTINGS
@given(data=st.binary(max_size=300), cut=st.integers(0, 400))
def test_random_bytes_and_cut_gzip_give_a_result_or_a_user_error(tmp_path, name, data, cut):
    path = tmp_path / "garbage"
    path.write_bytes(data)
    _check(READERS[name], path)
    path.write_bytes(gzip.compress(data)[:cut])
    _check(READERS[name], path)


@SETTINGS
@given(
    values=st.lists(st.sampled_from(["nan", "inf", "-inf", "1e39", "-1e39", "NaN", "Infinity"]), min_size=1)
)
def test_a_non_finite_score_is_always_refused(tmp_path, values):
    path = tmp_path / "run"
    lines = [f"q1 Q0 d{i} {i} {v} s" for i, v in enumerate(["1.0", *values])]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match=rf"^{path}:2: score must be a finite number"):
        read_run(path)
    with pytest.raises(UserError, match=rf"^{path}:2:"):
        read_run(path, queries={"q1"})


# --- validation from the JSON text decides as the two steps do --------------------------------

RICH = (
    '["q1", [{"paragraph_id": "d1", "text": "caf\\u00e9 \\ud83d\\ude00", "extra": {"n": [1, 2.5, null]},'
    ' "paragraph_data": {"judgments": [{"paragraphId": "d1", "query": "q1", "relevance": 2,'
    ' "titleQuery": null}], "rankings": [{"method": "r", "paragraphId": "d1", "queryId": "q1",'
    ' "rank": 1, "score": 3}]}, "exam_grades": [{"correctAnswered": ["q1/a"], "wrongAnswered": [],'
    ' "answers": [["q1/a", "yes"]], "llm": "m", "llm_options": {"t": 0.5, "k": 1e5},'
    ' "exam_ratio": 1, "prompt_info": {"prompt_class": "P", "is_self_rated": true},'
    ' "self_ratings": [{"question_id": "q1/a", "self_rating": 5}], "prompt_type": "question"}]}]]\n'
    '["q2", [{"paragraph_id": "d1", "text": "x", "grades": [{"correctAnswered": true, "answer": 4,'
    ' "llm": "m", "self_ratings": 4}]}]]\n'
)


def _two_steps(path: Path) -> list[QueryWithFullParagraphList]:
    """The passages read by :func:`json.loads`, then validated from the Python objects."""
    from rubric.data.graded import query_lines, scan_order, unique_passages
    from rubric.data.jsonl import full_passages

    return [
        QueryWithFullParagraphList(
            queryId=q, paragraphs=[p for _, p in unique_passages(path, q, parts, full_passages)]
        )
        for q, parts in query_lines(path, scan_order(path))
    ]


def _outcome(read: Callable[[Path], list[QueryWithFullParagraphList]], path: Path) -> list | str:
    try:
        return [json.dumps(q.to_json(), ensure_ascii=False) for q in read(path)]
    except UserError as e:
        return str(e)


@pytest.mark.parametrize(
    "edit",
    [
        ("", ""),
        ('"rank": 1', '"rank": 1.0'),
        ('"rank": 1', '"rank": "1"'),
        ('"rank": 1', '"rank": 1.5'),
        ('"score": 3', '"score": "3"'),
        ('"score": 3', '"score": NaN'),
        ('"score": 3', '"score": 1e400'),
        ("[1, 2.5, null]", "[1, NaN]"),
        ("[1, 2.5, null]", "[-Infinity]"),
        ("[1, 2.5, null]", "[1e400]"),
        ('"q1", [{', "1, [{"),
        ('"text": "x"', '"text": 7'),
        ('"text": "x"', '"text": "x", "text": "y"'),
        ('"text": "x"', '"text": "\\ud800"'),
        ('"relevance": 2', '"relevance": true'),
        ('"relevance": 2,', ""),
        ('"self_rating": 5', '"self_rating": "5"'),
        ('"answer": 4', '"answer": [4, {"a": null}]'),
        ('"d1", "text": "x"', '"d2", "text": "x"'),
        ('["q2"', '["q1"'),
        ("]]\n[", "]]\n\n["),
        ("}]}]]\n", "}]}]\n"),
    ],
)
def test_validation_from_json_text_matches_the_two_steps(tmp_path, edit):
    path = tmp_path / "p.jsonl"
    path.write_text(RICH.replace(*edit))
    assert _outcome(lambda p: list(read_passages(p)), path) == _outcome(_two_steps, path)


@SETTINGS
@given(edits=edits)
def test_validation_from_json_text_matches_the_two_steps_on_mutations(tmp_path, edits):
    path = tmp_path / "p.jsonl"
    path.write_bytes(_mutate(RICH.encode(), edits))
    assert _outcome(lambda p: list(read_passages(p)), path) == _outcome(_two_steps, path)
