"""Agreement on cells: the LLM against each reviewer, and reviewers against each other.

`rubric verify apply` writes each reviewer's grades as ``HumanReview`` records (llm
``human:<name>``). Here every rater is a map (query, passage, item) -> 0-5 grade; each pair of
raters is compared on the cells both graded: exact agreement, Cohen's kappa with the grades as
categories, Cohen's kappa of "grade >= T" for every threshold T, and the grade x grade counts.
A confirmation counts as the reviewer giving the LLM's grade.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.grade_filter import GradeFilter, GradeKind, resolve_kind
from rubric.data.graded import GradedInput, graded_input
from rubric.data.query_selection import QuerySelection, absent_note
from rubric.data.table import Table
from rubric.errors import UserError
from rubric.verify.agreement import kappa_from_counts
from rubric.verify.review import HUMAN_PROMPT_CLASS

Cell = tuple[str, str, str]
THRESHOLDS = range(1, 6)

log = logging.getLogger(__name__)


@dataclass
class RaterCounts:
    """Raters in order (the LLM first, reviewers as they first appear) and, per pair of raters,
    the (grade of a, grade of b) counts over the cells both graded."""

    raters: list[str]
    pairs: dict[tuple[str, str], Counter[tuple[int, int]]] = field(default_factory=dict)

    def add_query(self, cells: dict[str, dict[Cell, int]]) -> None:
        """One query's cells per rater (cells of different queries never meet)."""
        for who in cells:
            if who not in self.raters:
                self.raters.append(who)
        order = sorted(cells, key=self.raters.index)
        for a, b in itertools.combinations(order, 2):
            common = cells[a].keys() & cells[b].keys()
            if common:
                counts = self.pairs.setdefault((a, b), Counter())
                counts.update((cells[a][c], cells[b][c]) for c in sorted(common))


def rater_counts(graded: GradedInput, selection: GradeFilter) -> tuple[GradeKind, RaterCounts]:
    """The selected LLM grades and each reviewer's (same prompt type), compared cell by cell,
    one query at a time."""
    source = graded.source
    kind = resolve_kind(graded.survey.kinds, selection, source, exclude_prompt_class=HUMAN_PROMPT_CLASS)
    if kind.prompt_type == "direct":
        raise UserError(f"{source}: {kind.prompt_class} is a direct prompt; reviewers grade items")
    found = RaterCounts([kind.llm])
    for q in graded.queries():
        cells: dict[str, dict[Cell, int]] = {kind.llm: {}}
        for p in q.passages:
            for g in p.exam_grades:
                human = g.kind.prompt_class == HUMAN_PROMPT_CLASS and g.kind.prompt_type == kind.prompt_type
                if g.kind == kind or human:
                    mine = cells.setdefault(g.kind.llm, {})
                    for item, grade in g.grades.items():
                        mine[(q.query_id, p.paragraph_id, item)] = grade
        found.add_query(cells)
    if len(found.raters) == 1:
        raise UserError(
            f"{source}: no {HUMAN_PROMPT_CLASS} grades of {kind.prompt_type}s; apply reviews with "
            "`rubric verify apply` first"
        )
    return kind, found


def agreement_tables(found: RaterCounts) -> list[Table]:
    """A summary row per pair of raters, then a grade x grade table per pair that shares cells."""
    rows: list[list[int | str | float | None]] = []
    confusions: list[Table] = []
    for a, b in itertools.combinations(found.raters, 2):
        counts = found.pairs.get((a, b), Counter())
        n = sum(counts.values())
        binary = []
        for t in THRESHOLDS:
            above: Counter[tuple[bool, bool]] = Counter()
            for (x, y), c in counts.items():
                above[(x >= t, y >= t)] += c
            binary.append(kappa_from_counts(above) if n else None)
        exact = sum(c for (x, y), c in counts.items() if x == y) / n if n else None
        rows.append([a, b, n, exact, kappa_from_counts(counts) if n else None, *binary])
        if n:
            grades_a = sorted({x for x, _ in counts}, reverse=True)
            grades_b = sorted({y for _, y in counts}, reverse=True)
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


@dataclass(frozen=True)
class ReviewerAgreement:
    """`rubric verify agreement --reviews`: the summary table first, then one grade x grade table
    per pair of raters that shares cells."""

    tables: list[Table]

    def lines(self) -> list[str]:
        """A line per pair of raters (from the summary table): the cells both graded and the kappa."""
        out = []
        for row in self.tables[0].rows:
            a, b, n, kappa = row[0], row[1], row[2], row[4]
            out.append(
                f"{a} vs {b}: {n} cells" + (f", kappa {kappa:.4f}" if isinstance(kappa, float) else "")
            )
        return out


def reviewer_agreement(
    graded: Path, grades: GradeFilter, queries: QuerySelection | None
) -> ReviewerAgreement:
    """The selected LLM grades of ``graded`` against each reviewer's, and reviewers against each
    other; selected queries the file lacks are noted (the file is read once, query by query)."""
    with graded_input(graded, queries) as source:
        if line := absent_note(source.absent(), str(graded), "selected"):
            log.info(line)
        _, raters = rater_counts(source, grades)
    return ReviewerAgreement(agreement_tables(raters))
