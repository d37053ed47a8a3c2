"""Grid display (workbench paper §4.4): per query, passages x items with grade and answer.

The grid shows patterns no single number does: an item every passage answers (too easy), an item
nobody answers (wrong or off-topic), a relevant passage with an empty row (a gap in the bank).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from rubric.data.table import Table
from rubric.verify.items import short_id, snippet
from rubric.verify.matrix import GradeMatrix
from rubric.verify.report import GradedSelection, write_report

log = logging.getLogger(__name__)


def grid_tables(
    matrix: GradeMatrix,
    item_texts: dict[str, str] | None = None,
    *,
    answers: bool = True,
    width: int = 60,
) -> Iterator[Table]:
    """One table per query: a row per passage, a column per item (``grade`` or ``grade: answer``).

    Columns are headed by the short item id (first 8 hex digits of its md5); the notes map them
    back to full ids and texts. Tables come one query at a time.
    """
    texts = item_texts or {}
    for q in matrix.queries:
        rows: list[list[str | int | float | None]] = []
        for p in q.passages:
            cells: list[str | int | float | None] = [q.query_id, p.passage_id, p.judgment]
            for item in q.items:
                if item not in p.grades:
                    cells.append("")
                elif answers and p.answers.get(item):
                    cells.append(f"{p.grades[item]}: {snippet(p.answers[item], width)}")
                else:
                    cells.append(p.grades[item])
            rows.append(cells)
        legend = [
            f"{short_id(i)} = {i}" + (f": {snippet(texts[i], 200)}" if i in texts else "") for i in q.items
        ]
        yield Table(
            ["query_id", "passage_id", "judgment", *[short_id(i) for i in q.items]],
            rows,
            title=f"query {q.query_id}" + (f": {q.query_text}" if q.query_text else ""),
            notes=legend,
        )


def grid_report(
    selection: GradedSelection,
    item_texts: dict[str, str] | None,
    *,
    answers: bool,
    width: int,
    fmt: str,
    output: Path | None,
    answer: str = "auto",
) -> None:
    """`rubric verify grid`: write the grids of the selected grades, one query at a time."""
    build = lambda m: grid_tables(m, item_texts, answers=answers, width=width)  # noqa: E731
    write_report(selection, build, fmt, output=output, answer=answer)
