"""Spurious items (workbench paper §4.4): items graded high on passages judged non-relevant.

An item that many non-relevant passages "answer" is too generic (or the grader misreads it); it
inflates every system's score and should be rewritten or dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from rubric.data.table import Table
from rubric.verify.items import snippet
from rubric.verify.matrix import GradeMatrix
from rubric.verify.report import GradedSelection, write_report

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ItemCounts:
    """How one item fared on the judged passages of its query."""

    query_id: str
    item_id: str
    nonrelevant_high: int
    nonrelevant: int
    relevant_high: int
    relevant: int

    @property
    def ratio(self) -> float:
        return self.nonrelevant_high / self.nonrelevant if self.nonrelevant else 0.0


def item_counts(matrix: GradeMatrix, max_judgment: int, min_grade: int) -> list[ItemCounts]:
    """Per item: non-relevant (judgment <= max) passages graded >= min_grade, most first."""
    out = []
    for q in matrix.queries:
        for item in q.items:
            nh = n = rh = r = 0
            for p in q.passages:
                if p.judgment is None or item not in p.grades:
                    continue
                high = p.grades[item] >= min_grade
                if p.judgment <= max_judgment:
                    n += 1
                    nh += high
                else:
                    r += 1
                    rh += high
            out.append(ItemCounts(q.query_id, item, nh, n, rh, r))
    out.sort(key=lambda c: (-c.nonrelevant_high, -c.ratio, c.query_id, c.item_id))
    return out


def spurious_table(
    matrix: GradeMatrix,
    max_judgment: int,
    min_grade: int,
    item_texts: dict[str, str] | None = None,
    top: int = 0,
) -> Table:
    texts = item_texts or {}
    counts = item_counts(matrix, max_judgment, min_grade)
    shown = counts[:top] if top else counts
    rows: list[list[str | int | float | None]] = [
        [
            c.query_id,
            c.item_id,
            c.nonrelevant_high,
            c.nonrelevant,
            c.ratio,
            c.relevant_high,
            c.relevant,
            snippet(texts.get(c.item_id, ""), 200),
        ]
        for c in shown
    ]
    return Table(
        [
            "query_id",
            "item_id",
            "nonrel_graded_high",
            "nonrel_judged",
            "ratio",
            "rel_graded_high",
            "rel_judged",
            "item_text",
        ],
        rows,
        title=f"items graded >= {min_grade} on passages judged <= {max_judgment}",
    )


def spurious_report(
    selection: GradedSelection,
    max_judgment: int,
    min_grade: int,
    *,
    item_texts: dict[str, str] | None,
    top: int,
    fmt: str,
    output: Path | None,
) -> None:
    """`rubric verify spurious`: write the item table of the selected rating grades (a direct
    prompt grades no items and is refused)."""
    build = lambda m: [spurious_table(m, max_judgment, min_grade, item_texts, top)]  # noqa: E731
    write_report(selection, build, fmt, output=output, answer="rating", items=True)
