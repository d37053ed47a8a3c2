"""Verify grading (workbench paper §4.4): item by item, every passage's grade and answer.

Reading the answers of one item sorted by grade shows at a glance whether the grader's 4s and
5s really answer the question and whether its 0s really do not.
"""

from __future__ import annotations

from rubric.verify.items import snippet
from rubric.verify.matrix import GradeMatrix
from rubric.verify.table import Table


def grading_table(matrix: GradeMatrix, item_texts: dict[str, str] | None = None, width: int = 120) -> Table:
    """Rows per (item, passage), items in query order, grades descending, then passage order."""
    texts = item_texts or {}
    rows: list[list[str | int | float | None]] = []
    for q in matrix.queries:
        for item in q.items:
            graded = [(p.grades[item], i, p) for i, p in enumerate(q.passages) if item in p.grades]
            graded.sort(key=lambda t: (-t[0], t[1]))
            for grade, _, p in graded:
                rows.append(
                    [
                        q.query_id,
                        item,
                        snippet(texts.get(item, ""), width),
                        grade,
                        snippet(p.answers.get(item, ""), width),
                        p.passage_id,
                        p.judgment,
                        snippet(p.text, width),
                    ]
                )
    answers = matrix.answer_kind.prompt_class if matrix.answer_kind else matrix.kind.prompt_class
    return Table(
        ["query_id", "item_id", "item_text", "grade", "answer", "passage_id", "judgment", "passage"],
        rows,
        title=f"grades of {matrix.kind.prompt_class} ({matrix.kind.llm}), answers of {answers}",
    )
