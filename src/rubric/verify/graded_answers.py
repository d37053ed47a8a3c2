"""Verify grading (workbench paper §4.4): item by item, every passage's grade and answer.

Reading the answers of one item sorted by grade shows at a glance whether the grader's 4s and
5s really answer the question and whether its 0s really do not.
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


def grading_table(
    matrix: GradeMatrix,
    item_texts: dict[str, str] | None = None,
    width: int = 120,
    counts: Counter[str] | None = None,
) -> Table:
    """Rows per (item, passage), items in query order, grades descending, then passage order.

    The rows come one query at a time as the table is rendered; ``counts`` (if given) then holds
    the ``grades``, ``items`` and ``queries`` seen.
    """
    texts = item_texts or {}
    seen = counts if counts is not None else Counter()

    def rows() -> Iterator[list[str | int | float | None]]:
        for q in matrix.queries:
            seen["queries"] += 1
            seen["items"] += len(q.items)
            for item in q.items:
                graded = [(p.grades[item], i, p) for i, p in enumerate(q.passages) if item in p.grades]
                graded.sort(key=lambda t: (-t[0], t[1]))
                for grade, _, p in graded:
                    seen["grades"] += 1
                    yield [
                        q.query_id,
                        item,
                        snippet(texts.get(item, ""), width),
                        grade,
                        snippet(p.answers.get(item, ""), width),
                        p.passage_id,
                        p.judgment,
                        snippet(p.text, width),
                    ]

    answers = matrix.answer_kind.prompt_class if matrix.answer_kind else matrix.kind.prompt_class
    return Table(
        ["query_id", "item_id", "item_text", "grade", "answer", "passage_id", "judgment", "passage"],
        rows(),
        title=f"grades of {matrix.kind.prompt_class} ({matrix.kind.llm}), answers of {answers}",
    )


def grading_report(
    selection: GradedSelection,
    item_texts: dict[str, str] | None,
    width: int,
    *,
    fmt: str,
    output: Path | None,
    answer: str = "auto",
) -> Counter[str]:
    """`rubric verify grading`: write the table of the selected grades (streamed), then note how
    many grades, items and queries it holds; returns those counts."""
    counts: Counter[str] = Counter()
    write_report(
        selection,
        lambda m: [grading_table(m, item_texts, width, counts)],
        fmt,
        output=output,
        answer=answer,
    )
    log.info("%d grades of %d items in %d queries", counts["grades"], counts["items"], counts["queries"])
    return counts
