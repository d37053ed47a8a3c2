"""The original workbench's inter-annotator tables: counts per label set, one-vs-rest kappa per row.

Its ``--inter-annotator-out`` LaTeX tables (RUBRIC, ICTIR'24, Table 5) tally passages by a set of
labels (row) and a set of judgment levels (column), and give each row a Cohen's kappa of the
binary question "label in the row's set?" against "judgment in one paired column's set?" (the
boxed cell). Two tables are kept here, with the original's rows, columns and pairings:

* **GRADED**: one row per label 5..0, columns the judgment levels 3..0. Pairing when judgment 1
  counts as relevant (``min_relevant`` <= 1): 5, 4 -> 2; 3, 2, 1 -> 1; 0 -> 0. When it does not
  (TREC DL, ``min_relevant`` 2): 5, 4 -> 3; 3, 2, 1 -> 2; 0 -> 0. Binary labels (answer
  verification, yes/no prompts) have rows 1 and 0, paired 1 -> 2, 0 -> 0.
* **MERGE**: rows {4,5}, {1,2,3}, {0} against columns {2,3}, {1}, {0}, or with ``min_relevant``
  >= 2 against {3}, {2} and the non-relevant levels; row i is paired with column i.

A row's count in a column is the number of passages with a label in the row's set and a
judgment in the column's set. Kappa is ``nan`` where the original printed 0.0 (chance agreement
is total, so kappa is undefined).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rubric.data.table import Table
from rubric.verify.agreement import Agreement, kappa_from_counts

LevelSet = frozenset[int]


@dataclass(frozen=True)
class OneVsRestRow:
    labels: LevelSet
    paired: LevelSet  # the judgment levels its kappa is computed against


def _fmt(levels: LevelSet) -> str:
    """``{4, 5}`` -> ``4+5`` (the original's cell names)."""
    return "+".join(str(x) for x in sorted(levels))


def _binary_kappa(ag: Agreement, labels: LevelSet, judged: LevelSet) -> float:
    counts: dict[tuple[bool, bool], int] = {}
    for (g, j), c in ag.counts.items():
        key = (g in labels, j in judged)
        counts[key] = counts.get(key, 0) + c
    return kappa_from_counts(counts)


def _table(ag: Agreement, name: str, rows: Sequence[OneVsRestRow], columns: Sequence[LevelSet]) -> Table:
    body: list[list[int | str | float | None]] = []
    for row in rows:
        cells = [sum(c for (g, j), c in ag.counts.items() if g in row.labels and j in col) for col in columns]
        total = sum(c for (g, _), c in ag.counts.items() if g in row.labels)
        body.append(
            [_fmt(row.labels), *cells, total, _fmt(row.paired), _binary_kappa(ag, row.labels, row.paired)]
        )
    return Table(
        ["label", *[f"judgment={_fmt(c)}" for c in columns], "total", "kappa_vs", "kappa"],
        body,
        title=f"{ag.name}: {name}, one-vs-rest kappa of each label set against judgment in kappa_vs".strip(
            ": "
        ),
    )


def _levels(*values: int) -> LevelSet:
    return frozenset(values)


def graded_table(ag: Agreement) -> Table:
    """Labels 5..0 (or 1, 0 for binary labels) x judgments 3..0, the original's GRADED table."""
    strict = ag.min_relevant >= 2
    judgments = sorted({0, 1, 2, 3} | set(ag.judgment_levels()), reverse=True)
    if max(ag.grades(), default=0) <= 1:
        rows = [OneVsRestRow(_levels(1), _levels(2)), OneVsRestRow(_levels(0), _levels(0))]
    else:
        high, mid = (3, 2) if strict else (2, 1)
        pair = {5: high, 4: high, 3: mid, 2: mid, 1: mid, 0: 0}
        top = max(5, *ag.grades())
        rows = [OneVsRestRow(_levels(g), _levels(pair.get(g, high))) for g in range(top, -1, -1)]
    return _table(ag, "GRADED", rows, [_levels(j) for j in judgments])


def merge_table(ag: Agreement) -> Table:
    """Labels {4,5}, {1,2,3}, {0} x merged judgment levels, the original's MERGE table."""
    labels = [_levels(4, 5), _levels(1, 2, 3), _levels(0)]
    if ag.min_relevant >= 2:
        non_relevant = frozenset(j for j in {-2, -1, 0, 1, *ag.judgment_levels()} if j < ag.min_relevant)
        columns = [_levels(3), _levels(2), non_relevant]
    else:
        columns = [_levels(2, 3), _levels(1), _levels(0)]
    return _table(
        ag, "MERGE", [OneVsRestRow(lab, col) for lab, col in zip(labels, columns, strict=True)], columns
    )


def original_tables(ag: Agreement) -> list[Table]:
    """GRADED and (for graded labels) MERGE, as the original wrote them per prompt class."""
    tables = [graded_table(ag)]
    if max(ag.grades(), default=0) > 1:
        tables.append(merge_table(ag))
    return tables
