"""The grades of one (prompt class, LLM) kind as a per-query passages x items matrix.

Every verify report looks at the same thing: for each query, which items each passage was graded
on, with what grade, what answer the LLM extracted and how a human judged the passage. Loading
that once into plain dicts (instead of walking pydantic records in every report) keeps each
report a few lines long and fast on DL19-size files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.models import ExamGrades, FullParagraphData, Grades, QueryWithFullParagraphList
from rubric.data.query_selection import QuerySelection
from rubric.data.select import GradeFilter, GradeKind, grade_kinds, resolve_filter
from rubric.errors import UserError
from rubric.evaluate.labels import LabelRule, direct_grade, item_grades

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
    """The selected grades of a whole file (``kind``), plus where the answers came from."""

    kind: GradeKind
    answer_kind: GradeKind | None
    queries: list[QueryGrades]
    ungraded: int = 0
    absent: list[str] = field(default_factory=list)  # selected query ids the file lacks

    @property
    def direct(self) -> bool:
        return self.kind.prompt_type == "direct"

    def passages(self) -> Iterable[tuple[QueryGrades, PassageGrades]]:
        for q in self.queries:
            for p in q.passages:
                yield q, p


def _answer_text(value: object) -> str:
    return "" if value is None else str(value)


def _record_grades(g: ExamGrades | Grades) -> tuple[dict[str, int], dict[str, str]]:
    if isinstance(g, Grades):
        return {DIRECT_ITEM: direct_grade(g)}, {DIRECT_ITEM: _answer_text(g.answer)}
    return item_grades(g), {item: _answer_text(a) for item, a in g.answers}


def _is_self_rated(g: ExamGrades | Grades) -> bool:
    if g.prompt_info is not None and g.prompt_info.is_self_rated is not None:
        return bool(g.prompt_info.is_self_rated)
    return isinstance(g, ExamGrades) and bool(g.self_ratings)


def auto_answer_kind(queries: list[QueryWithFullParagraphList], kind: GradeKind) -> GradeKind | None:
    """The answer-extraction prompt that goes with ``kind``: same LLM and item type, not self-rated.

    The original workbench grades every item twice, once for a 0-5 self-rating and once with an
    answer-extraction prompt; the extracted answer is what a human wants to read next to the
    grade. Returns ``None`` when there is no such prompt or more than one (then the rating
    prompt's own answers are shown).
    """
    if kind.prompt_type == "direct":
        return None
    candidates: set[GradeKind] = set()
    for q in queries:
        for p in q.paragraphs:
            for g in p.exam_grades or []:
                if g.llm == kind.llm and (g.prompt_type or "question") == kind.prompt_type:
                    if g.prompt_class != kind.prompt_class and not _is_self_rated(g):
                        candidates.add(GradeKind(g.prompt_class, g.llm, kind.prompt_type))
        if len(candidates) > 1:
            return None
    return next(iter(candidates)) if len(candidates) == 1 else None


def _pick(p: FullParagraphData, kind: GradeKind) -> ExamGrades | Grades | None:
    f = GradeFilter(kind.prompt_class, kind.llm, kind.prompt_type)
    found = f.select(p)
    return found[0] if found else None


def build_matrix(
    queries: list[QueryWithFullParagraphList],
    selection: GradeFilter,
    *,
    answer_prompt: str | None = "auto",
    source: str = "input",
) -> GradeMatrix:
    """Collect the grades ``selection`` picks; answers from ``answer_prompt`` (a prompt class).

    ``answer_prompt``: ``"auto"`` finds the answer-extraction prompt of the same items
    (:func:`auto_answer_kind`), ``None`` or ``"rating"`` keeps the rating prompt's answers, any
    other value must be a prompt class of the file with the same LLM and item type.
    """
    kind = resolve_filter(queries, selection, source)
    answer_kind: GradeKind | None
    if answer_prompt in (None, "rating", kind.prompt_class):
        answer_kind = None
    elif answer_prompt == "auto":
        answer_kind = auto_answer_kind(queries, kind)
    else:
        answer_kind = resolve_filter(
            queries,
            GradeFilter(answer_prompt, kind.llm, kind.prompt_type),
            f"{source} (--answer-prompt)",
        )
    result: list[QueryGrades] = []
    ungraded = 0
    for q in queries:
        items: dict[str, None] = {}
        rows: list[PassageGrades] = []
        query_text = ""
        for p in q.paragraphs:
            for j in p.paragraph_data.judgments:
                if j.query == q.queryId and j.titleQuery:
                    query_text = query_text or j.titleQuery
            g = _pick(p, kind)
            if g is None:
                ungraded += 1
                continue
            grades, answers = _record_grades(g)
            if answer_kind is not None:
                a = _pick(p, answer_kind)
                if a is not None:
                    answers.update(_record_grades(a)[1])
            items.update(dict.fromkeys(grades))
            rows.append(PassageGrades(p.paragraph_id, p.text, p.judgment(q.queryId), grades, answers))
        if rows:
            result.append(QueryGrades(q.queryId, query_text, list(items), rows))
    return GradeMatrix(kind, answer_kind, result, ungraded)


def load_matrix(
    path: str | Path,
    selection: GradeFilter,
    *,
    answer_prompt: str | None = "auto",
    queries: QuerySelection | None = None,
) -> GradeMatrix:
    """Read a graded passages file (only the ``queries`` selected) and build its :class:`GradeMatrix`;
    ``absent`` lists the selected ids the file lacks."""
    chosen = queries or QuerySelection()
    passages = read_selected(path, chosen)
    if not grade_kinds(passages.queries):
        raise UserError(f"{path}: no grades at all; run `rubric grade` first")
    matrix = build_matrix(passages.queries, selection, answer_prompt=answer_prompt, source=str(path))
    matrix.absent = passages.absent
    return matrix


@dataclass
class SelectedPassages:
    queries: list[QueryWithFullParagraphList]
    absent: list[str]  # selected query ids the file lacks


def read_selected(path: str | Path, chosen: QuerySelection) -> SelectedPassages:
    """The passages of the selected queries; none of them in the file is an error."""
    from rubric.data.jsonl import read_passages

    every = list(read_passages(path))
    absent = chosen.check_present([q.queryId for q in every], str(path))
    return SelectedPassages(list(chosen.select(every, lambda q: q.queryId)), absent)


def passage_labels(matrix: GradeMatrix, rule: LabelRule) -> dict[tuple[str, str], int]:
    """The relevance label of every graded passage under ``rule`` (direct prompts: their grade)."""
    out: dict[tuple[str, str], int] = {}
    for q, p in matrix.passages():
        if matrix.direct:
            out[(q.query_id, p.passage_id)] = p.grades[DIRECT_ITEM]
        else:
            out[(q.query_id, p.passage_id)] = rule.apply(list(p.grades.values()))
    return out


def judgments(matrix: GradeMatrix) -> dict[tuple[str, str], int]:
    """The human judgment of every graded passage that has one."""
    return {(q.query_id, p.passage_id): p.judgment for q, p in matrix.passages() if p.judgment is not None}
