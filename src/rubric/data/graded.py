"""Graded passages files read for reports: one query at a time, only the fields reports use.

A TREC RAG-size campaign (300k passages x 20 items) is a file of gigabytes; reports (qrels,
Cover, every `rubric verify` report) need a handful of fields of each passage. Here a line is
parsed with :func:`json.loads` and the fields are read from the dicts into small records
(:class:`QueryRecord`, :class:`PassageRecord`, :class:`GradeRecord`) without a pydantic model
per passage, item and grade: several times faster, and memory is bounded by the largest query,
not the file.

Validation: every field a record holds is checked to have the type the pydantic models of
:mod:`rubric.data.models` give it. Where a value is anything else (missing, ``null``, a number
as a string, ...) the passage is validated by :class:`~rubric.data.models.FullParagraphData`
itself, so pydantic decides exactly as for the commands that rewrite the file: its error (with
``file:line`` and the field) or its coerced values. Fields no report reads (scores, options,
unknown fields) are not checked here; ``rubric convert check`` and the commands that rewrite the
file validate every field.

Lines of one query: the format is one line per query, but the original workbench writes some
files one line per passage. Adjacent lines of one query are merged as they stream by. A query
whose lines are *not* adjacent is gathered in the second pass through a temporary sqlite file
(on disk, so memory stays bounded), found by the first pass (a report's :func:`survey`, or
:func:`scan_order`, which reads only the query ids); either way the result is the file's queries
in the order of their first line, as :func:`rubric.data.jsonl.read_passages` always gave them. A
passage twice in one query is an error naming both lines. ``-`` and pipes are copied to a
temporary file first (:func:`~rubric.data.files.rereadable`): these readers read their input
twice.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner: not in typeshed
from typing import Any

from pydantic import ValidationError

from rubric.data.files import PathLike, iter_lines, rereadable
from rubric.data.grade_filter import DIRECT, GradeKind
from rubric.data.json_line import describe_validation_error, id_text, parse_json_line
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList
from rubric.data.query_selection import QuerySelection
from rubric.errors import UserError

LINE_SHAPE = 'expected a JSON array ["query_id", [passage, ...]]'


# --- garbage collection ------------------------------------------------------------------------

_relaxed = 0
_was_enabled = True


@contextlib.contextmanager
def relaxed_gc() -> Iterator[None]:
    """No cyclic garbage collection while a file is parsed.

    A line of a graded file becomes about a million small objects, all alive until the query is
    done; every collection walks them again (each object is visited in the young generation,
    then again in the older ones), which doubled the time of reading at CPython's default
    thresholds and still cost 40% of validating a line at a threshold of 100,000 allocations
    (measured). Parsed JSON and the records and models built from it hold no reference cycles:
    reference counting frees each query when the next one replaces it, so nothing waits for the
    collector (the peak RSS of 20k and 200k passages is the same, ``benchmarks/scale.py``).
    Nested readers keep it off until the outermost one ends; then it is back as it was.
    """
    global _relaxed, _was_enabled
    if _relaxed == 0:
        _was_enabled = gc.isenabled()
        gc.disable()
    _relaxed += 1
    try:
        yield
    finally:
        _relaxed -= 1
        if _relaxed == 0 and _was_enabled:
            gc.enable()


# --- records -----------------------------------------------------------------------------------


@dataclass(slots=True)
class GradeRecord:
    """One grade record of a passage: an ``exam_grades`` entry (items) or a ``grades`` entry
    (a direct grade of the passage as a whole)."""

    kind: GradeKind
    exam: bool
    self_rated: bool
    grades: dict[str, int]
    """Item grades: the self-ratings, else 1 for correctly and 0 for wrongly answered items
    (:func:`rubric.data.labels.item_grades`); empty for direct grades."""
    direct_grade: int = 0
    """Direct grades: the rating, else the relevance label, else 1 when correct
    (:func:`rubric.data.labels.direct_grade`)."""
    correct: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    raw_answers: Any = None
    """Exam grades: their ``[item, answer]`` pairs; direct grades: their ``answer``."""

    def answers(self) -> dict[str, str]:
        """Exam grades: the answer text per item (``""`` for ``null``)."""
        return {item: _text(a) for item, a in self.raw_answers}

    def answer_text(self) -> str:
        """Direct grades: the answer as text."""
        return _text(self.raw_answers)


def _text(value: object) -> str:
    return "" if value is None else str(value)


@dataclass(slots=True)
class PassageRecord:
    paragraph_id: str
    text: str
    judgments: list[tuple[str, int, str | None]]  # (query, relevance, titleQuery)
    rankings: list[tuple[str, str, int]]  # (method, queryId, rank)
    exam_grades: list[GradeRecord]
    grades: list[GradeRecord]

    def judgment(self, query_id: str | None = None) -> int | None:
        """The (maximum) judged relevance, for ``query_id`` when given (as the model's method)."""
        levels = [rel for q, rel, _ in self.judgments if query_id is None or q == query_id]
        return max(levels) if levels else None

    def first(self, kind: GradeKind) -> GradeRecord | None:
        """The first grade record of ``kind`` (exam grades before direct grades)."""
        for g in self.exam_grades:
            if g.kind == kind:
                return g
        for g in self.grades:
            if g.kind == kind:
                return g
        return None

    def all_grades(self) -> Iterator[GradeRecord]:
        yield from self.exam_grades
        yield from self.grades


@dataclass(slots=True)
class QueryRecord:
    query_id: str
    passages: list[PassageRecord]


# --- the fast path: dicts -> records, pydantic where anything is unusual ----------------------


class _Unusual(Exception):
    """A value the fast path does not take as it is: pydantic decides."""


_MISSING: Any = object()


def _list(d: dict, key: str, *, required: bool = False) -> list:
    value = d.get(key, _MISSING)
    if value is _MISSING and not required:
        return []
    if type(value) is not list:
        raise _Unusual
    return value


def _optional(d: dict, key: str, kind: type) -> Any:
    value = d.get(key)
    if value is not None and type(value) is not kind:
        raise _Unusual
    return value


def _required(d: dict, key: str, kind: type) -> Any:
    value = d.get(key, _MISSING)
    if type(value) is not kind:
        raise _Unusual
    return value


def _head(g: Any, *, direct: bool) -> tuple[GradeKind, bool | None]:
    """The kind of a grade record and its declared ``is_self_rated``."""
    if type(g) is not dict:
        raise _Unusual
    llm = _required(g, "llm", str)
    info = g.get("prompt_info")
    if info is None:
        prompt_class, declared = "", None
    elif type(info) is dict:
        prompt_class = _required(info, "prompt_class", str)
        declared = _optional(info, "is_self_rated", bool)
    else:
        raise _Unusual
    prompt_type = _optional(g, "prompt_type", str)
    return GradeKind(prompt_class, llm, DIRECT if direct else prompt_type or "question"), declared


def _strings(values: list) -> None:
    """Every value a ``str`` (``str.join`` checks in C what a Python loop would check slowly)."""
    try:
        "".join(values)
    except TypeError:
        raise _Unusual from None


def _exam(g: Any) -> GradeRecord:
    kind, declared = _head(g, direct=False)
    ratings = g.get("self_ratings")
    grades: dict[str, int] = {}
    if ratings is not None:
        if type(ratings) is not list:
            raise _Unusual
        for r in ratings:
            if type(r) is not dict:
                raise _Unusual
            question = r.get("question_id")
            nugget = r.get("nugget_id")
            rating = r.get("self_rating")
            if (
                type(rating) is not int
                or (question is not None and type(question) is not str)
                or (nugget is not None and type(nugget) is not str)
            ):
                raise _Unusual
            grades[question if question is not None else (nugget or "")] = rating
    correct = _list(g, "correctAnswered")
    wrong = _list(g, "wrongAnswered")
    _strings(correct)
    _strings(wrong)
    answers = _list(g, "answers")
    for pair in answers:
        if not (type(pair) in (list, tuple) and len(pair) == 2 and type(pair[0]) is str):
            raise _Unusual
    if not ratings:
        grades = dict.fromkeys(wrong, 0)
        grades.update(dict.fromkeys(correct, 1))
    self_rated = bool(declared) if declared is not None else bool(ratings)
    return GradeRecord(kind, True, self_rated, grades, 0, correct, wrong, answers)


def _direct(g: Any) -> GradeRecord:
    kind, declared = _head(g, direct=True)
    correct = _required(g, "correctAnswered", bool)
    rating = _optional(g, "self_ratings", int)
    label = _optional(g, "relevance_label", int)
    grade = rating if rating is not None else label if label is not None else int(correct)
    return GradeRecord(kind, False, bool(declared), {}, grade, raw_answers=g.get("answer", ""))


def _passage_fast(p: Any) -> PassageRecord:
    if type(p) is not dict:
        raise _Unusual
    pid = _required(p, "paragraph_id", str)
    text = _required(p, "text", str)
    data = p.get("paragraph_data", _MISSING)
    judgments: list[tuple[str, int, str | None]] = []
    rankings: list[tuple[str, str, int]] = []
    if data is not _MISSING:
        if type(data) is not dict:
            raise _Unusual
        for j in _list(data, "judgments"):
            if type(j) is not dict:
                raise _Unusual
            _required(j, "paragraphId", str)
            judgments.append(
                (_required(j, "query", str), _required(j, "relevance", int), _optional(j, "titleQuery", str))
            )
        for r in _list(data, "rankings"):
            if type(r) is not dict:
                raise _Unusual
            _required(r, "paragraphId", str)
            rankings.append(
                (_required(r, "method", str), _required(r, "queryId", str), _required(r, "rank", int))
            )
    exam = p.get("exam_grades")
    direct = p.get("grades")
    if exam is not None and type(exam) is not list or direct is not None and type(direct) is not list:
        raise _Unusual
    return PassageRecord(
        pid, text, judgments, rankings, [_exam(g) for g in exam or ()], [_direct(g) for g in direct or ()]
    )


def _validated(p: Any, index: int) -> dict:
    """The passage as pydantic reads it (coerced values), or its error as ``paragraphs[i].field``."""
    try:
        return FullParagraphData.model_validate(p).model_dump()
    except ValidationError as e:
        raise ValueError(describe_validation_error(e, prefix=f"paragraphs[{index}]")) from None


def passage_record(p: Any, index: int = 0) -> PassageRecord:
    """The record of one passage dict (``index``: its place in the line, for messages)."""
    try:
        return _passage_fast(p)
    except _Unusual:
        return _passage_fast(_validated(p, index))


def query_record(q: QueryWithFullParagraphList) -> QueryRecord:
    """The record of a loaded query (library callers that hold models)."""
    return QueryRecord(q.queryId, [passage_record(p.model_dump(), i) for i, p in enumerate(q.paragraphs)])


# --- lines of one query ------------------------------------------------------------------------


def peek_query_id(line: str) -> str | None:
    """The query id of a passages line from its first characters (``["qid", ...``), without
    parsing the rest; ``None`` when the line does not start like that (then parse it)."""
    start = line.find("[")
    if start < 0 or line[:start].strip():
        return None
    at = start + 1
    while at < len(line) and line[at] in " \t":
        at += 1
    if line[at : at + 1] != '"':
        return None
    try:
        qid, end = scanstring(line, at + 1)
    except ValueError:
        return None
    return qid


def parse_passages_line(path: PathLike, line_no: int, line: str) -> tuple[str, Any]:
    """``(query_id, passages)`` of one line, its passages as parsed JSON (a list); broken JSON or
    another shape than ``["query_id", [...]]`` is an error at ``path:line_no``."""
    obj = parse_json_line(path, line_no, line)
    if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[1], list)):
        raise UserError(f"{path}:{line_no}: {LINE_SHAPE}")
    return id_text(f"{path}:{line_no}", "the query id", obj[0]), obj[1]


LineParser = Callable[[PathLike, int, str], tuple[str, Any]]


def _query_id(path: PathLike, line_no: int, line: str) -> str:
    qid = peek_query_id(line)
    if qid is not None:
        return qid
    return parse_passages_line(path, line_no, line)[0]


@dataclass
class QueryOrder:
    """The queries of a passages file in the order of their first line, and whether the lines of
    some query are not adjacent (then reading gathers them, see the module docstring)."""

    ids: list[str]
    scattered: bool


def _ordering() -> tuple[list[str], Callable[[str], bool]]:
    """A list of query ids in first-line order and a function that notes the query of each line
    and says whether it returns to a query after another one."""
    ids: list[str] = []
    seen: set[str] = set()
    scattered = False

    def note(qid: str) -> bool:
        nonlocal scattered
        if ids and ids[-1] == qid:
            return scattered
        if qid in seen:
            scattered = True
        else:
            seen.add(qid)
            ids.append(qid)
        return scattered

    return ids, note


def scan_order(path: PathLike, name: PathLike | None = None) -> QueryOrder:
    """The first pass of readers that do not survey the file otherwise: query ids only."""
    shown = name if name is not None else path
    ids, note = _ordering()
    scattered = False
    for line_no, line in iter_lines(path, name):
        if line.strip():
            scattered = note(_query_id(shown, line_no, line))
    return QueryOrder(ids, scattered)


def _gathered(
    lines: Iterable[tuple[int, str]], order: list[str], path: PathLike
) -> Iterator[tuple[int, str]]:
    """The lines sorted by query (first-line order), then by line number, through sqlite on disk."""
    rank = {q: i for i, q in enumerate(order)}
    with tempfile.TemporaryDirectory(prefix="rubric-") as folder:
        db = sqlite3.connect(os.path.join(folder, "lines.sqlite"))
        try:
            db.execute("CREATE TABLE line (query INTEGER, line_no INTEGER, text TEXT)")
            rows = ((rank[_query_id(path, n, t)], n, t) for n, t in lines if t.strip())
            db.executemany("INSERT INTO line VALUES (?, ?, ?)", rows)
            yield from db.execute("SELECT line_no, text FROM line ORDER BY query, line_no")
        finally:
            db.close()


class ScatteredLines(Exception):
    """A query's lines are not adjacent, met by a reader that was given no :class:`QueryOrder`
    (it reads the file once more with one, see :func:`query_lines`)."""


def query_lines(
    path: PathLike,
    order: QueryOrder | None,
    selected: QuerySelection | None = None,
    name: PathLike | None = None,
    parse: LineParser = parse_passages_line,
) -> Iterator[tuple[str, list[tuple[int, Any]]]]:
    """``(query_id, [(line_no, passages), ...])`` per query in first-line order; lines of queries
    not ``selected`` are skipped without parsing them where their id can be read from their start.

    ``order`` is the first pass's (:func:`scan_order`, :func:`survey`); without one the file is
    read once, and a query whose lines are not adjacent raises :class:`ScatteredLines`, for
    callers that can start again with an order (nothing of theirs is out yet). ``parse`` turns a
    line into ``(query_id, passages)`` (default :func:`parse_passages_line`; full validation
    passes one that validates while parsing).
    """
    shown = name if name is not None else path
    chosen = selected or QuerySelection()
    lines: Iterable[tuple[int, str]] = iter_lines(path, name)
    if order is not None and order.scattered:
        lines = _gathered(lines, order.ids, shown)
    with relaxed_gc():
        yield from _grouped(shown, lines, chosen, strict=order is None, parse=parse)


def _grouped(
    shown: PathLike,
    lines: Iterable[tuple[int, str]],
    chosen: QuerySelection,
    *,
    strict: bool,
    parse: LineParser,
) -> Iterator[tuple[str, list[tuple[int, Any]]]]:
    current: str | None = None
    parts: list[tuple[int, Any]] = []
    done: set[str] = set()
    for line_no, line in lines:
        if not line.strip():
            continue
        qid = peek_query_id(line)
        if qid is not None and qid not in chosen:
            continue
        qid, passages = parse(shown, line_no, line)
        if qid not in chosen:
            continue
        if qid != current:
            if current is not None:
                yield current, parts
                if strict:
                    done.add(current)
            if qid in done:
                raise ScatteredLines(qid)
            current, parts = qid, []
        parts.append((line_no, passages))
    if current is not None:
        yield current, parts


def unique_passages(
    path: PathLike, query_id: str, parts: list[tuple[int, Any]], build: Callable[[Any], list]
) -> Iterator[tuple[int, Any]]:
    """``build(passages)`` of each of one query's lines, item by item as ``(line_no, built)``; a
    passage id twice is an error naming both lines, a bad passage (``build`` raises ValueError
    ``paragraphs[i].field: ...``) one naming its line."""
    seen: dict[str, int] = {}
    for line_no, passages in parts:
        try:
            built = build(passages)
        except (TypeError, ValueError) as e:
            raise UserError(f"{path}:{line_no}: {e}") from None
        for b in built:
            pid = b.paragraph_id
            first = seen.get(pid)
            if first is not None:
                other = "the same line" if first == line_no else f"line {first}"
                raise UserError(f"{path}:{line_no}: passage {pid} of query {query_id} is also on {other}")
            seen[pid] = line_no
            yield line_no, b


def passage_records(passages: list) -> list[PassageRecord]:
    """The records of one line's passages."""
    return [passage_record(p, i) for i, p in enumerate(passages)]


# --- surveys and streams -----------------------------------------------------------------------


@dataclass
class Survey:
    """What a report must know about the whole file before its first query: the file's query ids
    (in order), the kinds of grades of the selected queries (``kinds``: how many records each),
    and which exam-grade kinds are not self-rated (answer-extraction prompts)."""

    order: QueryOrder
    kinds: Counter[GradeKind] = field(default_factory=Counter)
    unrated: set[GradeKind] = field(default_factory=set)


def survey(path: PathLike, selected: QuerySelection | None = None, name: PathLike | None = None) -> Survey:
    """First pass: query ids of every line; the selected queries' passages read (so every error
    of the file is found before a report writes anything) and the kinds of their grades counted."""
    shown = name if name is not None else path
    chosen = selected or QuerySelection()
    ids, note = _ordering()
    scattered = False
    kinds: Counter[GradeKind] = Counter()
    unrated: set[GradeKind] = set()
    with relaxed_gc():
        for line_no, line in iter_lines(path, name):
            if not line.strip():
                continue
            qid = peek_query_id(line)
            if qid is not None and qid not in chosen:
                scattered = note(qid)
                continue
            qid, passages = parse_passages_line(shown, line_no, line)
            scattered = note(qid)
            if qid not in chosen:
                continue
            for i, p in enumerate(passages):
                try:
                    record = passage_record(p, i)  # every field the reports read is checked here
                except ValueError as e:
                    raise UserError(f"{shown}:{line_no}: {e}") from None
                for g in record.all_grades():
                    kinds[g.kind] += 1
                    if g.exam and not g.self_rated:
                        unrated.add(g.kind)
    return Survey(QueryOrder(ids, scattered), kinds, unrated)


def stream_queries(
    path: PathLike, order: QueryOrder, selected: QuerySelection | None = None, name: PathLike | None = None
) -> Iterator[QueryRecord]:
    """The selected queries as records, one at a time (second pass, after a survey or a scan)."""
    shown = name if name is not None else path
    for qid, parts in query_lines(path, order, selected, name):
        yield QueryRecord(qid, [p for _, p in unique_passages(shown, qid, parts, passage_records)])


@dataclass
class GradedFile:
    """A graded passages file opened for a report: surveyed once, then streamed as often as the
    report needs (:meth:`queries`). Use as a context manager (``-`` and pipes are copied)."""

    path: PathLike
    selected: QuerySelection = field(default_factory=QuerySelection)
    name: str | None = None  # how messages name the file (default: its path)
    _copy: PathLike | None = None
    _stack: contextlib.ExitStack | None = None
    _survey: Survey | None = None

    def __enter__(self) -> GradedFile:
        self._stack = contextlib.ExitStack()
        self._copy = self._stack.enter_context(rereadable(self.path))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stack is not None:
            self._stack.close()

    @property
    def source(self) -> str:
        return self.name or str(self.path)

    @property
    def survey(self) -> Survey:
        if self._survey is None:
            self._survey = survey(self.readable, self.selected, self.source)
        return self._survey

    @property
    def readable(self) -> PathLike:
        """The path to read: the file itself, or the temporary copy of `-` or a pipe."""
        if self._copy is None:
            raise RuntimeError("GradedFile is used as a context manager: with GradedFile(path) as f")
        return self._copy

    def absent(self) -> list[str]:
        """The selected query ids the file lacks; an error when it has none of them."""
        return self.selected.check_present(self.survey.order.ids, self.source)

    def queries(self) -> Iterator[QueryRecord]:
        return stream_queries(self.readable, self.survey.order, self.selected, self.source)


@dataclass
class LoadedGraded:
    """Queries a library caller already holds as models, read through the same interface as a
    :class:`GradedFile` (one code path for reports on files and on loaded queries)."""

    loaded: list[QueryWithFullParagraphList]
    selected: QuerySelection = field(default_factory=QuerySelection)
    source: str = "input"
    _survey: Survey | None = None

    def __enter__(self) -> LoadedGraded:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    @property
    def survey(self) -> Survey:
        if self._survey is None:
            found = Survey(QueryOrder(list(dict.fromkeys(q.queryId for q in self.loaded)), False))
            for q in self.queries():
                for p in q.passages:
                    for g in p.all_grades():
                        found.kinds[g.kind] += 1
                        if g.exam and not g.self_rated:
                            found.unrated.add(g.kind)
            self._survey = found
        return self._survey

    def absent(self) -> list[str]:
        return self.selected.check_present(self.survey.order.ids, self.source)

    def queries(self) -> Iterator[QueryRecord]:
        return (query_record(q) for q in self.loaded if q.queryId in self.selected)


# An opened graded input, a file or loaded queries (not `rubric.Graded`, what `rubric.grade` returns).
GradedInput = GradedFile | LoadedGraded


def graded_input(
    passages: list[QueryWithFullParagraphList] | PathLike,
    selected: QuerySelection | Iterable[str] | None = None,
    source: str | None = None,
) -> GradedInput:
    """A passages file (path) or loaded queries, to use as ``with graded_input(...) as g``."""
    chosen = QuerySelection.of(selected)
    if isinstance(passages, list):
        return LoadedGraded(passages, chosen, source or "input")
    return GradedFile(passages, chosen, source)
