"""The grades of one (prompt class, LLM) kind as a per-query passages x items matrix.

Every verify report looks at the same thing: for each query, which items each passage was graded
on, with what grade, what answer the LLM extracted and how a human judged the passage. Reading
that into plain dicts (instead of walking pydantic records in every report) keeps each report a
few lines long and fast; reading it one query at a time (:func:`open_matrix`, from
:mod:`rubric.data.graded`) keeps memory bounded by the largest query on campaign-size files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.grade_filter import GradeFilter, GradeKind, resolve_kind
from rubric.data.graded import GradedInput, GradeRecord, QueryRecord, graded_input
from rubric.data.labels import LabelRule
from rubric.data.models import QueryWithFullParagraphList
from rubric.data.query_selection import QuerySelection
from rubric.errors import UserError

DIRECT_ITEM = "(direct)"
"""The pseudo item of a direct prompt, which grades the passage as a whole."""


@dataclass
class PassageGrades:
    """One passage of one query with its grades, answers and judgment."""

    passage_id: str
    text: str
    judgment: int | None
    grades: dict[str, int]
    answers: dict[str, str] = field(default_factory=dict)

    def best(self) -> tuple[int, str | None]:
        """The best grade and the (first) item that got it; ``(0, None)`` when ungraded."""
        if not self.grades:
            return 0, None
        item = max(self.grades, key=lambda i: self.grades[i])
        return self.grades[item], item


@dataclass
class QueryGrades:
    """All graded passages of one query and its items in first-seen order."""

    query_id: str
    query_text: str
    items: list[str]
    passages: list[PassageGrades]


@dataclass
class GradeMatrix:
    """The selected grades of a file (``kind``), plus where the answers came from.

    ``queries`` is a list (:func:`load_matrix`, :func:`build_matrix`) or, from
    :func:`stream_matrix`, an iterator that reads the file one query at a time: then ``ungraded``
    is complete once it is exhausted, and a report goes through it once.
    """

    kind: GradeKind
    answer_kind: GradeKind | None
    queries: Iterable[QueryGrades]
    ungraded: int = 0
    absent: list[str] = field(default_factory=list)  # selected query ids the file lacks
    readable: Path | None = None  # the file read (a copy of ``-`` or a pipe), e.g. for its sha256

    @property
    def direct(self) -> bool:
        return self.kind.prompt_type == "direct"

    def passages(self) -> Iterable[tuple[QueryGrades, PassageGrades]]:
        for q in self.queries:
            for p in q.passages:
                yield q, p


def _record_grades(g: GradeRecord) -> tuple[dict[str, int], dict[str, str]]:
    if not g.exam:
        return {DIRECT_ITEM: g.direct_grade}, {DIRECT_ITEM: g.answer_text()}
    return g.grades, g.answers()


def auto_answer_kind(unrated: Iterable[GradeKind], kind: GradeKind) -> GradeKind | None:
    """The answer-extraction prompt that goes with ``kind``: same LLM and item type, not self-rated.

    The original workbench grades every item twice, once for a 0-5 self-rating and once with an
    answer-extraction prompt; the extracted answer is what a human wants to read next to the
    grade. ``unrated``: the kinds of exam grades in the file that are not self-rated. Returns
    ``None`` when there is no such prompt or more than one (then the rating prompt's own answers
    are shown).
    """
    if kind.prompt_type == "direct":
        return None
    candidates = {
        k
        for k in unrated
        if k.llm == kind.llm and k.prompt_type == kind.prompt_type and k.prompt_class != kind.prompt_class
    }
    return next(iter(candidates)) if len(candidates) == 1 else None


def _answer_kind(graded: GradedInput, kind: GradeKind, answer_prompt: str | None) -> GradeKind | None:
    if answer_prompt in (None, "rating", kind.prompt_class):
        return None
    if answer_prompt == "auto":
        return auto_answer_kind(graded.survey.unrated, kind)
    return resolve_kind(
        graded.survey.kinds,
        GradeFilter(answer_prompt, kind.llm, kind.prompt_type),
        f"{graded.source} (--answer-prompt)",
    )


def query_grades(
    q: QueryRecord, kind: GradeKind, answer_kind: GradeKind | None
) -> tuple[QueryGrades | None, int]:
    """One query's row of the matrix (``None`` when no passage has grades of ``kind``), and how
    many of its passages have none."""
    items: dict[str, None] = {}
    rows: list[PassageGrades] = []
    query_text = ""
    ungraded = 0
    for p in q.passages:
        for query, _, title in p.judgments:
            if query == q.query_id and title:
                query_text = query_text or title
        g = p.first(kind)
        if g is None:
            ungraded += 1
            continue
        grades, answers = _record_grades(g)
        if answer_kind is not None:
            a = p.first(answer_kind)
            if a is not None:
                answers = {**answers, **_record_grades(a)[1]}
        items.update(dict.fromkeys(grades))
        rows.append(PassageGrades(p.paragraph_id, p.text, p.judgment(q.query_id), grades, answers))
    return (QueryGrades(q.query_id, query_text, list(items), rows) if rows else None), ungraded


def stream_matrix(
    graded: GradedInput, selection: GradeFilter, *, answer_prompt: str | None = "auto"
) -> GradeMatrix:
    """The matrix of an open graded input, its queries read one at a time as a report asks.

    ``answer_prompt``: ``"auto"`` finds the answer-extraction prompt of the same items
    (:func:`auto_answer_kind`), ``None`` or ``"rating"`` keeps the rating prompt's answers, any
    other value must be a prompt class of the file with the same LLM and item type.
    """
    kind = resolve_kind(graded.survey.kinds, selection, graded.source)
    answer_kind = _answer_kind(graded, kind, answer_prompt)
    matrix = GradeMatrix(kind, answer_kind, [])

    def rows() -> Iterator[QueryGrades]:
        for q in graded.queries():
            row, ungraded = query_grades(q, kind, answer_kind)
            matrix.ungraded += ungraded
            if row is not None:
                yield row

    matrix.queries = rows()
    return matrix


def build_matrix(
    queries: list[QueryWithFullParagraphList],
    selection: GradeFilter,
    *,
    answer_prompt: str | None = "auto",
    source: str = "input",
) -> GradeMatrix:
    """Collect the grades ``selection`` picks in loaded queries (see :func:`stream_matrix`)."""
    matrix = stream_matrix(graded_input(queries, source=source), selection, answer_prompt=answer_prompt)
    matrix.queries = list(matrix.queries)
    return matrix


def open_matrix(
    graded: GradedInput, selection: GradeFilter, *, answer_prompt: str | None = "auto"
) -> GradeMatrix:
    """:func:`stream_matrix` after the checks every report makes: selected queries present, some
    grades in the file; ``absent`` lists the selected ids the file lacks."""
    absent = graded.absent()
    if not graded.survey.kinds:
        raise UserError(f"{graded.source}: no grades at all; run `rubric grade` first")
    matrix = stream_matrix(graded, selection, answer_prompt=answer_prompt)
    matrix.absent = absent
    return matrix


def load_matrix(
    path: str | Path,
    selection: GradeFilter,
    *,
    answer_prompt: str | None = "auto",
    queries: QuerySelection | None = None,
) -> GradeMatrix:
    """Read a graded passages file (only the ``queries`` selected) into a :class:`GradeMatrix`
    held in memory (reports on huge files use :func:`open_matrix` on an open file instead)."""
    with graded_input(path, queries) as graded:
        matrix = open_matrix(graded, selection, answer_prompt=answer_prompt)
        matrix.queries = list(matrix.queries)
    return matrix


def query_labels(q: QueryGrades, *, direct: bool, rule: LabelRule) -> Iterator[tuple[tuple[str, str], int]]:
    """``((query, passage), label)`` of every graded passage of one query under ``rule``."""
    for p in q.passages:
        yield (
            (q.query_id, p.passage_id),
            p.grades[DIRECT_ITEM] if direct else rule.apply(list(p.grades.values())),
        )


def passage_labels(matrix: GradeMatrix, rule: LabelRule) -> dict[tuple[str, str], int]:
    """The relevance label of every graded passage under ``rule`` (direct prompts: their grade)."""
    return {
        key: label for q in matrix.queries for key, label in query_labels(q, direct=matrix.direct, rule=rule)
    }


def query_judgments(q: QueryGrades) -> dict[tuple[str, str], int]:
    """The human judgment of every graded passage of one query that has one."""
    return {(q.query_id, p.passage_id): p.judgment for p in q.passages if p.judgment is not None}


def judgments(matrix: GradeMatrix) -> dict[tuple[str, str], int]:
    """The human judgment of every graded passage that has one."""
    return {key: j for q in matrix.queries for key, j in query_judgments(q).items()}
