"""What every report over a graded file does around its own table: open the file, select the
grades of one kind, write the tables as they come, and say what was left out.

Each verify report (grading, grid, uncovered, spurious, impact, html) differs only in the table
it builds from the selected :class:`~rubric.verify.matrix.Matrix`; the opening, the notes about
absent queries and ungraded passages, and the refusal of direct prompts where items are needed
are the same for all, so they live here once. Notes go to the ``rubric`` logger (the CLI prints
them on stderr), in the order they arise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rubric.data.table import Table, emit_tables
from rubric.errors import UserError

if TYPE_CHECKING:  # every verify report command imports this module; the readers load on use
    from rubric.data.grade_filter import GradeFilter
    from rubric.data.query_selection import QuerySelection

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GradedSelection:
    """Which grades of which graded passages file a report reads."""

    graded: Path
    grades: GradeFilter
    queries: QuerySelection | None = None


@contextmanager
def selected_grades(selection: GradedSelection, *, answer: str = "auto", items: bool = False) -> Iterator:
    """The selected grades as a streamed matrix (``with selected_grades(...) as m``); ``items``:
    the report needs item grades, so a direct prompt is refused. After the report went through
    the matrix, how many passages had no grades of its kind is noted."""
    from rubric.data.graded import graded_input
    from rubric.data.query_selection import absent_note
    from rubric.verify.matrix import open_matrix

    with graded_input(selection.graded, selection.queries) as source:
        m = open_matrix(source, selection.grades, answer_prompt=answer)
        if line := absent_note(m.absent, source.source, "selected"):
            log.info(line)
        if items and m.direct:
            raise UserError(f"{source.source}: {m.kind.prompt_class} is a direct prompt; it grades no items")
        m.readable = source.readable
        yield m
        if m.ungraded:
            kind = m.kind.prompt_class
            log.info("%s: %d passages have no %s grades and are left out", source.source, m.ungraded, kind)


def write_report(
    selection: GradedSelection,
    tables: Callable[..., Iterable[Table]],
    fmt: str,
    *,
    output: Path | None,
    answer: str = "auto",
    items: bool = False,
) -> Iterable[Table]:
    """Write the tables that ``tables(matrix)`` builds from the selected grades (streamed:
    a report over a huge file never holds its whole text); returns what ``tables`` returned."""
    with selected_grades(selection, answer=answer, items=items) as m:
        built = tables(m)
        emit_tables(built, fmt, output)
    return built
