"""``--query ID`` and ``--queries FILE``: one definition for every command that takes a query subset.

A command declares ``query: list[str] = QUERY, queries: Path | None = QUERIES`` and turns them
into a :class:`~rubric.data.query_selection.QuerySelection` with :func:`selection`. No short
names: ``-q`` already means other things in some commands (``--per-query``).
"""

from __future__ import annotations

from pathlib import Path

import typer

from rubric.cli.common import info

QUERY = typer.Option(
    None,
    "--query",
    help="Only this query id (repeatable; with --queries, the union). [default: every query]",
)
QUERIES = typer.Option(
    None,
    "--queries",
    help="Only the queries of this file: queries JSON {qid: text}, JSON lines, TREC topics TSV, "
    "or one id per line.",
)


def selection(query: list[str] | None, queries: Path | None):
    """The :class:`~rubric.data.query_selection.QuerySelection` of the two options."""
    from rubric.data.query_selection import QuerySelection

    return QuerySelection.from_options(query, queries)


def note_absent(ids: list[str], where: str, consequence: str = "") -> None:
    """Say on stderr which queries an input lacks (nothing when none is missing)."""
    from rubric.data.query_selection import absent_note

    line = absent_note(ids, where, consequence)
    if line:
        info(line)
