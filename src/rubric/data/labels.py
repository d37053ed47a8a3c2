"""From the grades of one passage to its relevance label (Rubric-Qrels / EXAM-Qrels).

RUBRIC (ICTIR'24, eq. 1) and EXAM++ (eq. 2): the label of a passage is the best grade over the
test items; variants count the items graded at least ``min_grade`` or take the m-th best grade
("at least m items"). For answer-verification prompts (no self-ratings), an item answered
correctly has grade 1 and a wrong one 0. Direct prompts grade the passage as a whole.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from rubric.data.models import ExamGrades, Grades
from rubric.errors import UserError


def item_grades(g: ExamGrades) -> dict[str, int]:
    """Grade per test item: the self-rating, else 1 for correctly answered and 0 for wrong."""
    if g.self_ratings:
        return {r.item_id: r.self_rating for r in g.self_ratings}
    grades = {item: 0 for item in g.wrongAnswered}
    grades.update({item: 1 for item in g.correctAnswered})
    return grades


def merge_preferred(base: dict[str, int], preferred: Iterable[dict[str, int]]) -> dict[str, int]:
    """Item grades ``base`` with every item that a ``preferred`` record grades taken from those
    (``{item: grade}`` per record).

    Used for human corrections (``--prefer HumanReview``): a reviewer's grade replaces the LLM's
    on the cells the reviewer graded; elsewhere the LLM's grade stands. Where several preferred
    records grade one item (several reviewers), the lower median of their grades counts: with
    three or more reviewers one outlier cannot move it, and two who disagree give the lower
    (conservative) grade.
    """
    grades = dict(base)
    given: dict[str, list[int]] = {}
    for record in preferred:
        for item, g in record.items():
            given.setdefault(item, []).append(g)
    grades.update({item: statistics.median_low(gs) for item, gs in given.items()})
    return grades


def direct_grade(g: Grades) -> int:
    """The grade of a direct prompt: its rating, else its relevance label, else correct = 1."""
    if g.self_ratings is not None:
        return int(g.self_ratings)
    if g.relevance_label is not None:
        return int(g.relevance_label)
    return int(bool(g.correctAnswered))


@dataclass(frozen=True)
class LabelRule:
    """How item grades become one label: ``max``, ``count`` (items >= min_grade) or ``nth``."""

    mode: str = "max"
    min_grade: int = 1
    nth: int = 1

    @classmethod
    def parse(cls, spec: str, min_grade: int = 1) -> LabelRule:
        """``max`` | ``count`` | ``nth:M`` (the M-th best grade)."""
        if spec == "max":
            return cls("max", min_grade)
        if spec == "count":
            return cls("count", min_grade)
        if spec.startswith("nth:"):
            try:
                m = int(spec[4:])
            except ValueError:
                m = 0
            if m >= 1:
                return cls("nth", min_grade, m)
        raise UserError(f"{{label}}: expected 'max', 'count' or 'nth:M' (M >= 1), got {spec!r}", "label")

    def apply(self, grades: list[int]) -> int:
        if not grades:
            return 0
        if self.mode == "max":
            return max(grades)
        if self.mode == "count":
            return sum(1 for x in grades if x >= self.min_grade)
        ordered = sorted(grades, reverse=True)
        return ordered[self.nth - 1] if len(ordered) >= self.nth else 0


def direct_label(grade: int, rule: LabelRule = LabelRule()) -> int:
    """The relevance label a direct grade gives its passage.

    A direct grade is one item, the passage itself: ``count`` makes it binary (1 when the grade
    is at least ``min_grade``, i.e. ``correctAnswered`` at the default 1 -- the original tool's
    binary export of direct grades); ``max`` and ``nth:1`` keep the grade.
    """
    if rule.mode == "count":
        return int(grade >= rule.min_grade)
    return grade


@dataclass(frozen=True)
class GradeMap:
    """Labels to levels by thresholds, e.g. ``5=3,4=1``: 5+ -> 3, 4 -> 1, below -> 0.

    Lets a multiclass kappa compare a 0-5 grade scale with a 0-3 judgment scale the way the
    TREMA-UNH LLMJudge submission did (best grade >= 5 -> 3, >= 4 -> 1, else 0)
    (``verify agreement --map``), and qrels be written on another scale (``evaluate qrels
    --map``: 0-5 labels as 0-3 with ``2=1,4=2,5=3``). Shared by verify and evaluate.
    """

    steps: tuple[tuple[int, int], ...]

    @classmethod
    def parse(cls, spec: str) -> GradeMap:
        steps = []
        for part in spec.split(","):
            left, sep, right = part.partition("=")
            try:
                if not sep:
                    raise ValueError
                steps.append((int(left), int(right)))
            except ValueError:
                raise UserError(
                    f"{{mapping}}: expected GRADE=LEVEL pairs like '5=3,4=1', got {part.strip()!r}", "mapping"
                ) from None
        return cls(tuple(sorted(steps, reverse=True)))

    def describe(self) -> str:
        """The map in words: ``5+ -> 3, 4 -> 1, below 4 -> 0``."""
        parts = []
        for i, (threshold, level) in enumerate(self.steps):
            upper = self.steps[i - 1][0] - 1 if i else None
            span = (
                f"{threshold}+"
                if upper is None
                else (f"{threshold}" if upper == threshold else f"{threshold}-{upper}")
            )
            parts.append(f"{span} -> {level}")
        lowest = self.steps[-1][0] if self.steps else 0
        return ", ".join([*parts, f"below {lowest} -> 0"])

    def __call__(self, grade: int) -> int:
        for threshold, level in self.steps:
            if grade >= threshold:
                return level
        return 0
