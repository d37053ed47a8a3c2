"""`rubric convert check`: validate a workbench file line by line and say what it holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from rubric.data.files import iter_lines, rereadable
from rubric.data.grade_filter import format_kinds, grade_kinds
from rubric.data.graded import ScatteredLines
from rubric.data.jsonl import parse_json_line, read_bank, read_passages
from rubric.data.models import QueryWithFullParagraphList
from rubric.data.table import counted


def describe(path: Path) -> list[str]:
    """Lines that summarise a test bank (queries, items, kinds) or a passages file (queries,
    passages, judgments, runs and the kinds of grades: the values of --prompt-class/--llm/
    --prompt-type). A bad line is a :class:`~rubric.errors.UserError` naming file:line."""
    with rereadable(path) as copy:  # `-` and pipes are copied: the file is read more than once
        first = next(((n, line) for n, line in iter_lines(copy, path) if line.strip()), None)
        if first is not None and isinstance(parse_json_line(path, *first), dict):
            n_banks = items = 0
            kinds = set()
            for b in read_bank(copy, path):
                n_banks += 1
                items += len(b.items)
                kinds.add(b.kind or "empty")
            return [
                f"{path}: test bank, {n_banks} queries/facets, {items} items ({', '.join(sorted(kinds))})"
            ]
        try:
            found = _passages_summary(read_passages(copy, path, scan=False))
        except ScatteredLines:  # lines of a query apart: read again, gathering them
            found = _passages_summary(read_passages(copy, path))
    n_queries, n_passages, judged, runs, kinds_found = found
    return [
        f"{path}: passages file, {n_queries} queries, {n_passages} passages, {judged} judged, "
        + counted(len(runs), "run"),
        format_kinds(kinds_found),
    ]


def _passages_summary(queries: Iterable[QueryWithFullParagraphList]):
    """Queries, passages, judged passages, runs and kinds of grades of a passages file."""
    n_queries = n_passages = judged = 0
    runs: set[str] = set()
    kinds: Counter = Counter()
    for q in queries:
        n_queries += 1
        n_passages += len(q.paragraphs)
        judged += sum(1 for p in q.paragraphs if p.paragraph_data.judgments)
        runs.update(r.method for p in q.paragraphs for r in p.paragraph_data.rankings)
        kinds.update(grade_kinds([q]))
    return n_queries, n_passages, judged, runs, kinds
