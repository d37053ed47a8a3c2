"""Rubric-Qrels / EXAM-Qrels: one relevance label per graded passage (RUBRIC eq. 1, EXAM++ eq. 2).

The grades of one (prompt class, LLM) are chosen with a :class:`~rubric.data.select.GradeFilter`
(an empty or ambiguous choice is an error listing what the file holds) and turned into labels by
a :class:`~rubric.evaluate.labels.LabelRule`. The qrels feed trec_eval measures, with ``-l`` as
the grade threshold. ``per_item`` writes one line per (passage, item) instead, the item id in
column 2, for intent-aware measures. ``prefer`` names a prompt class (``HumanReview``: the grades
of `rubric verify apply`) whose item grades replace the selected grades wherever they exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.models import ExamGrades, Grades, QueryWithFullParagraphList
from rubric.data.query_selection import QuerySelection
from rubric.data.select import DIRECT, GradeFilter, GradeKind, resolve_filter
from rubric.errors import UserError
from rubric.evaluate.facets import FacetMap, direct_facet_labels, item_facet_labels
from rubric.evaluate.labels import LabelRule, passage_label, preferred_grades

QrelsRow = tuple[str, str, str, int]


@dataclass
class QrelsResult:
    rows: list[QrelsRow] = field(default_factory=list)
    kind: GradeKind | None = None
    ungraded: int = 0  # passages without a grade of the selected kind (no line written)
    passages: int = 0
    absent: list[str] = field(default_factory=list)  # selected queries the file lacks
    preferred: int = 0  # passages whose label uses a grade of the preferred prompt class


def _selected(grades: list[ExamGrades | Grades], kind: GradeKind) -> ExamGrades | Grades | None:
    chosen = GradeFilter(kind.prompt_class, kind.llm, kind.prompt_type)
    for g in grades:
        if chosen.matches(g):
            return g
    return None


def build_qrels(
    passages: list[QueryWithFullParagraphList] | str | Path,
    selection: GradeFilter = GradeFilter(),
    rule: LabelRule = LabelRule(),
    per_item: bool = False,
    source: str | None = None,
    queries: QuerySelection | Iterable[str] | None = None,
    prefer: str | None = None,
    facets: FacetMap | None = None,
) -> QrelsResult:
    """Labels for every passage graded by the one kind of grades ``selection`` picks.

    ``passages`` is a graded passages file or its loaded queries; the defaults are the CLI's
    (``--label max``: the best item grade). ``queries`` keeps only these query ids
    (``absent`` lists the selected ids the file lacks). ``prefer``: item grades of this prompt
    class (of the same prompt type) win over the selected ones where they exist (several such
    records: their lower median, see :func:`~rubric.evaluate.labels.preferred_grades`); a
    passage graded only by them is labelled from them alone. ``facets`` (``{}`` or the bank's,
    see :mod:`rubric.evaluate.facets`) writes one line per (query facet, passage) instead.
    """
    chosen = QuerySelection.of(queries)
    if not isinstance(passages, list):
        from rubric.data.jsonl import read_passages

        source = source or str(passages)
        passages = list(read_passages(passages))
    source = source or "input"
    absent = chosen.check_present([q.queryId for q in passages], source)
    passages = list(chosen.select(passages, lambda q: q.queryId))
    if prefer is not None and selection.prompt_class == prefer:
        raise UserError(
            f"--prefer {prefer}: also selected with --prompt-class; select the grades to fall back to"
        )
    kind = resolve_filter(passages, selection, source, exclude_prompt_class=prefer)
    if per_item and kind.prompt_type == DIRECT:
        raise UserError(
            f"--per-item: {source} holds direct grades ({kind.prompt_class}), which grade the passage "
            "as a whole; per-item qrels need question or nugget grades"
        )
    favoured = _favoured(passages, kind, prefer, source) if prefer is not None else None
    result = QrelsResult(kind=kind, absent=absent)
    for q in passages:
        for p in q.paragraphs:
            result.passages += 1
            grade = _selected([*(p.exam_grades or []), *(p.grades or [])], kind)
            preferred = [g for g in favoured.select(p) if isinstance(g, ExamGrades)] if favoured else []
            if grade is None and not preferred:
                result.ungraded += 1
                continue
            if isinstance(grade, Grades):
                if facets is not None:
                    labels = direct_facet_labels(q.queryId, grade, rule, facets, source)
                    result.rows.extend((f, "0", p.paragraph_id, label) for f, label in labels.items())
                else:
                    result.rows.append((q.queryId, "0", p.paragraph_id, passage_label(grade, rule)))
                continue
            result.preferred += bool(preferred)
            grades = preferred_grades(grade, preferred)
            if facets is not None:
                labels = item_facet_labels(q.queryId, grades, rule, facets, source)
                result.rows.extend((f, "0", p.paragraph_id, label) for f, label in labels.items())
            elif per_item:
                result.rows.extend((q.queryId, item, p.paragraph_id, g) for item, g in grades.items())
            else:
                result.rows.append((q.queryId, "0", p.paragraph_id, rule.apply(list(grades.values()))))
    return result


def _favoured(
    passages: list[QueryWithFullParagraphList], kind: GradeKind, prefer: str, source: str
) -> GradeFilter:
    """The grades ``--prefer`` names, of the selected kind's items (an error where there are none)."""
    if kind.prompt_type == DIRECT:
        raise UserError(
            f"--prefer {prefer}: {source} selects direct grades ({kind.prompt_class}), which grade no items"
        )
    favoured = GradeFilter(prefer, None, kind.prompt_type)
    if not any(favoured.select(p) for q in passages for p in q.paragraphs):
        raise UserError(
            f"--prefer {prefer}: {source} holds no {kind.prompt_type} grades of prompt class {prefer} "
            "(`rubric verify apply` writes HumanReview grades)"
        )
    return favoured
