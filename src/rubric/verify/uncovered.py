"""Missing in the test bank (workbench paper §4.4): relevant passages no item covers.

A passage judged relevant whose best grade stays below the threshold holds information the bank
does not ask about; reading it suggests the question or nugget to add.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from rubric.data.table import Table
from rubric.verify.items import snippet
from rubric.verify.matrix import GradeMatrix
from rubric.verify.report import GradedSelection, write_report

log = logging.getLogger(__name__)


def uncovered_table(matrix: GradeMatrix, min_judgment: int, min_grade: int, width: int = 200) -> Table:
    """Passages with judgment >= ``min_judgment`` and best grade < ``min_grade``, per query.

    Rows come one query at a time as the table is rendered; the note with the counts is added
    when they are done.
    """
    table = Table(
        ["query_id", "passage_id", "judgment", "best_grade", "best_item", "passage"],
        [],
        title=f"passages judged >= {min_judgment} with no item graded >= {min_grade}",
    )

    def rows() -> Iterator[list[str | int | float | None]]:
        relevant: Counter[str] = Counter()
        uncovered = 0
        for q, p in matrix.passages():
            if p.judgment is None or p.judgment < min_judgment:
                continue
            relevant[q.query_id] += 1
            best, item = p.best()
            if best < min_grade:
                uncovered += 1
                yield [q.query_id, p.passage_id, p.judgment, best, item or "", snippet(p.text, width)]
        n_rel = sum(relevant.values())
        table.notes.append(f"{uncovered} of {n_rel} relevant passages uncovered in {len(relevant)} queries")

    table.rows = rows()
    return table


def uncovered_report(
    selection: GradedSelection,
    min_judgment: int,
    min_grade: int,
    *,
    width: int,
    fmt: str,
    output: Path | None,
) -> Table:
    """`rubric verify uncovered`: write the table of the selected rating grades, then note its
    counts (known only once the rows went out)."""
    build = lambda m: [uncovered_table(m, min_judgment, min_grade, width)]  # noqa: E731
    (found,) = write_report(selection, build, fmt, output=output, answer="rating")
    log.info(found.notes[0])
    return found
