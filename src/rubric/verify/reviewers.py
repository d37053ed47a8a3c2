"""Agreement on cells: the LLM against each reviewer, and reviewers against each other.

`rubric verify apply` writes each reviewer's grades as ``HumanReview`` records (llm
``human:<name>``). Here every rater is a map (query, passage, item) -> 0-5 grade; each pair of
raters is compared on the cells both graded: exact agreement, Cohen's kappa with the grades as
categories, Cohen's kappa of "grade >= T" for every threshold T, and the grade x grade counts.
A confirmation counts as the reviewer giving the LLM's grade.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable

from rubric.data.models import ExamGrades, QueryWithFullParagraphList
from rubric.data.select import GradeFilter, GradeKind, resolve_filter
from rubric.errors import UserError
from rubric.evaluate.labels import item_grades
from rubric.verify.agreement import kappa_from_counts
from rubric.verify.review import HUMAN_PROMPT_CLASS
from rubric.verify.table import Table

Cell = tuple[str, str, str]
THRESHOLDS = range(1, 6)


def rater_grades(
    queries: list[QueryWithFullParagraphList], selection: GradeFilter, source: str
) -> tuple[GradeKind, dict[str, dict[Cell, int]]]:
    """The selected LLM grades and each reviewer's (same prompt type), per cell; LLM first."""
    kind = resolve_filter(queries, selection, source, exclude_prompt_class=HUMAN_PROMPT_CLASS)
    if kind.prompt_type == "direct":
        raise UserError(f"{source}: {kind.prompt_class} is a direct prompt; reviewers grade items")
    llm_filter = GradeFilter(kind.prompt_class, kind.llm, kind.prompt_type)
    human_filter = GradeFilter(HUMAN_PROMPT_CLASS, None, kind.prompt_type)
    raters: dict[str, dict[Cell, int]] = {kind.llm: {}}
    for q in queries:
        for p in q.paragraphs:
            for g in p.exam_grades or []:
                if llm_filter.matches(g) or human_filter.matches(g):
                    cells = raters.setdefault(g.llm, {})
                    assert isinstance(g, ExamGrades)
                    for item, grade in item_grades(g).items():
                        cells[(q.queryId, p.paragraph_id, item)] = grade
    if len(raters) == 1:
        raise UserError(
            f"{source}: no {HUMAN_PROMPT_CLASS} grades of {kind.prompt_type}s; apply reviews with "
            "`rubric verify apply` first"
        )
    return kind, raters


def _pairs(raters: dict[str, dict[Cell, int]]) -> Iterable[tuple[str, str, list[tuple[int, int]]]]:
    for a, b in itertools.combinations(raters, 2):
        common = raters[a].keys() & raters[b].keys()
        yield a, b, [(raters[a][c], raters[b][c]) for c in sorted(common)]


def agreement_tables(raters: dict[str, dict[Cell, int]]) -> list[Table]:
    """A summary row per pair of raters, then a grade x grade table per pair that shares cells."""
    rows: list[list[int | str | float | None]] = []
    confusions: list[Table] = []
    for a, b, pairs in _pairs(raters):
        counts = Counter(pairs)
        n = len(pairs)
        binary = []
        for t in THRESHOLDS:
            binary.append(kappa_from_counts(Counter((x >= t, y >= t) for x, y in pairs)) if n else None)
        exact = sum(x == y for x, y in pairs) / n if n else None
        rows.append([a, b, n, exact, kappa_from_counts(counts) if n else None, *binary])
        if n:
            grades_a = sorted({x for x, _ in pairs}, reverse=True)
            grades_b = sorted({y for _, y in pairs}, reverse=True)
            confusions.append(
                Table(
                    [f"{a} grade", *(f"{b}={h}" for h in grades_b)],
                    [[g, *(counts.get((g, h), 0) for h in grades_b)] for g in grades_a],
                    title=f"{a} (rows) vs {b} (columns): cells by grade",
                )
            )
    summary = Table(
        ["rater_a", "rater_b", "cells", "exact", "kappa", *(f"kappa_ge{t}" for t in THRESHOLDS)],
        rows,
        title="agreement on the cells both raters graded",
        notes=[
            "kappa: Cohen's, grades 0-5 as categories; kappa_geT: Cohen's of grade >= T on both sides; "
            "empty where the raters share no cell"
        ],
    )
    return [summary, *confusions]
