"""Graded passages as a flat table: one typed row per grade, for a notebook or a DataFrame.

The graded passages file keeps the original workbench's nested, camelCase shape (a query, its
passages, each with ``exam_grades`` of items and ``grades`` of direct prompts); a person looking
at grades wants a table. :class:`GradeRow` is one grade: the query, the passage, the item (None
for a direct grade of the whole passage), the prompt class, LLM and prompt type, the grade, the
answer, the human judgment and the passage's ranks in the runs. :func:`read_graded` streams the
rows of a file with the fast records of :mod:`rubric.data.graded` (one query in memory at a
time); :class:`GradedQueries` gives the same rows for queries held as models (what
``rubric.grade`` returns), and is what every report verb accepts in place of a path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from rubric.data.files import PathLike
from rubric.data.graded import GradedInput, QueryRecord, graded_input, query_record
from rubric.data.models import QueryWithFullParagraphList
from rubric.data.query_selection import QuerySelection
from rubric.errors import expected

if TYPE_CHECKING:
    import pandas


@dataclass(frozen=True, slots=True)
class GradeRow:
    """One grade of one passage for one query."""

    query: str
    passage: str
    item: str | None
    """The question or nugget id; None for a direct grade (of the passage as a whole)."""
    prompt_class: str
    llm: str
    prompt_type: str
    """``question``, ``nugget`` or ``direct``."""
    grade: int
    """The self-rating (0-5), else 1 for a correct and 0 for a wrong answer; direct grades: the
    rating, else the relevance label."""
    answer: str
    judgment: int | None
    """The human relevance label of the passage for the query, None when unjudged."""
    ranks: dict[str, int]
    """``{run: rank}``: where the runs that retrieved the passage ranked it for the query."""


def rows_of(query: QueryRecord) -> Iterator[GradeRow]:
    """The rows of one query's records: exam grades item by item, then direct grades."""
    for p in query.passages:
        judgment = p.judgment(query.query_id)
        ranks = {method: rank for method, qid, rank in p.rankings if qid == query.query_id}
        for g in p.all_grades():
            kind = g.kind
            if g.exam:
                answers = g.answers()
                graded: list[tuple[str | None, int, str]] = [
                    (item, grade, answers.get(item, "")) for item, grade in g.grades.items()
                ]
            else:
                graded = [(None, g.direct_grade, g.answer_text())]
            for item, grade, answer in graded:
                yield GradeRow(
                    query.query_id, p.paragraph_id, item, kind.prompt_class, kind.llm, kind.prompt_type,
                    grade, answer, judgment, ranks,
                )  # fmt: skip


def read_graded(path: PathLike, queries: QuerySelection | Iterable[str] | None = None) -> Iterator[GradeRow]:
    """The rows of a graded passages file (``queries``: only these query ids), streamed one
    query at a time; bad lines raise :class:`~rubric.errors.UserError` naming ``file:line``."""
    with open_graded(path, queries, parameter="path") as graded:
        for query in graded.queries():
            yield from rows_of(query)


COLUMNS = tuple(f.name for f in fields(GradeRow))


def rows_dataframe(rows: Iterable[GradeRow]) -> pandas.DataFrame:
    """The rows as a pandas DataFrame, one column per field of :class:`GradeRow` (pandas is
    imported here, only when a table is asked for: ``pip install 'rubric-workbench[notebook]'``)."""
    from rubric.extras import load

    pd = load("notebook", "pandas", "a DataFrame")
    frame = pd.DataFrame([asdict(r) for r in rows], columns=list(COLUMNS))
    return frame.astype({"grade": "int64", "judgment": "Int64"})


@dataclass
class GradedQueries:
    """Graded queries held as models (the nested format of the files), seen as a table.

    ``rubric.grade`` returns a subclass (:class:`rubric.grading.api.Graded`); every verb that
    reads grades (``rubric.qrels``, ``rubric.cover``, the verify reports) takes one in place of
    a path.
    """

    queries: list[QueryWithFullParagraphList]

    def rows(self) -> Iterator[GradeRow]:
        """One :class:`GradeRow` per grade, query by query, in the order of the file."""
        for q in self.queries:
            yield from rows_of(query_record(q))

    def to_dataframe(self) -> pandas.DataFrame:
        """:meth:`rows` as a pandas DataFrame (pandas imported only now)."""
        return rows_dataframe(self.rows())

    def __len__(self) -> int:
        return len(self.queries)

    def __repr__(self) -> str:
        passages = sum(len(q.paragraphs) for q in self.queries)
        return f"<{type(self).__name__}: {len(self.queries)} queries, {passages} passages>"


GradedLike = PathLike | GradedQueries | list[QueryWithFullParagraphList]
"""What the verbs that read grades take: a graded passages file, ``rubric.grade``'s result or
the queries themselves (``rubric.read_passages``, ``rubric.pool``)."""


def as_graded(graded: object, parameter: str = "graded") -> PathLike | list[QueryWithFullParagraphList]:
    """A path or the loaded queries of a :data:`GradedLike`; anything else is a one-line
    :class:`~rubric.errors.UserError` naming ``parameter``."""
    if isinstance(graded, GradedQueries):
        return graded.queries
    if isinstance(graded, str | os.PathLike):
        return graded if isinstance(graded, str) else Path(graded)
    if isinstance(graded, list | tuple) and all(isinstance(q, QueryWithFullParagraphList) for q in graded):
        return list(graded)
    raise expected(parameter, "a graded passages file, rubric.grade's result or a list of queries", graded)


def open_graded(
    graded: object,
    selected: QuerySelection | Iterable[str] | None = None,
    source: str | None = None,
    parameter: str = "graded",
) -> GradedInput:
    """:func:`~rubric.data.graded.graded_input` for any :data:`GradedLike` (use as ``with``)."""
    return graded_input(as_graded(graded, parameter), selected, source)
