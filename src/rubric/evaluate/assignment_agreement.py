"""Automatic vs manual nugget assignment: the 3x3 confusion matrix of "The Great Nugget Recall"
(§5.4, Figure 6).

Two ASSIGNED files label the same (run, query, nugget) triples with support / partial_support /
not_support; the matrix counts each (first file's label, second file's label) pair and gives
its share of all pairs. Rows are the first file (e.g. AutoAssign), columns the second (e.g.
ManualAssign), in the order support, partial_support, not_support, so mass in the lower
triangle means the first file gives lower labels (is stricter). Triples in one file only are
counted and reported, never guessed. Cohen's kappa (unweighted) and the share of exact
agreement summarise the matrix.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.query_selection import Queries, QuerySelection
from rubric.data.table import latex_escape
from rubric.errors import UserError

LABELS = ("support", "partial_support", "not_support")
SHORT = {"support": "S", "partial_support": "PS", "not_support": "NS"}

Triple = tuple[str, str, str]  # run, query, nugget id


def read_labels(path: str | Path, queries: QuerySelection | None = None) -> dict[Triple, str]:
    """``{(run, query, nugget_id): label}`` of an ASSIGNED file (of the selected queries)."""
    from rubric.evaluate.nuggets import iter_assigned

    chosen = queries or QuerySelection()
    out: dict[Triple, str] = {}
    for rec in iter_assigned(path):
        run, query = str(rec["run_id"]), str(rec["query_id"])
        if query not in chosen:
            continue
        for i, n in enumerate(rec["nuggets"]):
            nugget = n.get("nugget_id")
            if not nugget:
                raise UserError(f"{path}: run {run} query {query}: nuggets[{i}] has no nugget_id")
            if (run, query, nugget) in out:
                raise UserError(f"{path}: run {run} query {query}: nugget {nugget} is listed twice")
            out[(run, query, str(nugget))] = n["assignment"]
    return out


@dataclass
class AssignmentConfusion:
    """Counts of (first label, second label) over the triples both files assign."""

    counts: Counter[tuple[str, str]]
    first: str
    second: str
    only_first: int = 0
    only_second: int = 0
    notes: list[str] = field(default_factory=list)  # the summary and what was left out, for stderr

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    def count(self, a: str, b: str) -> int:
        return self.counts.get((a, b), 0)

    def share(self, a: str, b: str) -> float:
        return self.count(a, b) / self.n if self.n else float("nan")

    @property
    def agreement(self) -> float:
        return sum(self.count(lab, lab) for lab in LABELS) / self.n if self.n else float("nan")

    @property
    def kappa(self) -> float:
        from rubric.data.kappa import kappa_from_counts

        return kappa_from_counts(self.counts)

    def matrix(self) -> list[list[int]]:
        return [[self.count(a, b) for b in LABELS] for a in LABELS]

    def cell_text(self, a: str, b: str) -> str:
        return f"{100 * self.share(a, b):.1f}%\n({self.count(a, b)})"

    # --- writers -----------------------------------------------------------------------------

    def to_tsv(self, digits: int = 4) -> str:
        """Long format, one line per cell: ``first second count share``."""
        lines = [f"{self.first}\t{self.second}\tcount\tshare"]
        for a in LABELS:
            for b in LABELS:
                lines.append(f"{a}\t{b}\t{self.count(a, b)}\t{self.share(a, b):.{digits}f}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        return (
            json.dumps(
                {
                    "rows": self.first,
                    "columns": self.second,
                    "labels": list(LABELS),
                    "counts": self.matrix(),
                    "n": self.n,
                    "agreement": self.agreement,
                    "kappa": self.kappa,
                    "only_rows_file": self.only_first,
                    "only_columns_file": self.only_second,
                },
                indent=1,
            )
            + "\n"
        )

    def to_latex(self) -> str:
        """The matrix with "percent (count)" cells, rows the first file, columns the second."""
        lines = [
            "\\begin{tabular}{lrrr}",
            "\\toprule",
            f"{latex_escape(self.first)} $\\downarrow$ / {latex_escape(self.second)} $\\rightarrow$ & "
            + " & ".join(latex_escape(lab) for lab in LABELS)
            + " \\\\",
            "\\midrule",
        ]
        for a in LABELS:
            cells = [f"{100 * self.share(a, b):.1f}\\% ({self.count(a, b)})" for b in LABELS]
            lines.append(latex_escape(a) + " & " + " & ".join(cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"

    def render(self, fmt: str, digits: int = 4) -> str:
        if fmt == "json":
            return self.to_json()
        if fmt == "latex":
            return self.to_latex()
        return self.to_tsv(digits)

    def summary(self) -> str:
        return (
            f"{self.n} (run, query, nugget) assignments in both files; exact agreement "
            f"{self.agreement:.3f}, Cohen's kappa {self.kappa:.3f}"
        )


def assignment_confusion(
    first: str | Path,
    second: str | Path,
    queries: Queries = None,
) -> AssignmentConfusion:
    """The confusion matrix of two ASSIGNED files (rows: ``first``, columns: ``second``)."""
    chosen = QuerySelection.of(queries)
    a = read_labels(first, chosen)
    b = read_labels(second, chosen)
    both = a.keys() & b.keys()
    if not both:
        raise UserError(
            f"{first} and {second}: no (run, query, nugget) is assigned in both files "
            "(the files must label the same nuggets, matched by run_id, query_id and nugget_id)"
        )
    counts = Counter((a[k], b[k]) for k in both)
    result = AssignmentConfusion(
        counts, Path(first).name, Path(second).name, len(a.keys() - both), len(b.keys() - both)
    )
    result.notes.append(result.summary())
    if result.only_first or result.only_second:
        result.notes.append(
            f"left out assignments in one file only: {result.only_first} in {first}, "
            f"{result.only_second} in {second}"
        )
    return result


def confusion_output(
    assigned: Sequence[str | Path],
    *,
    reference: Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    per_topic: str | Path | None = None,
    label_runs: bool = False,
    queries: Queries = None,
) -> AssignmentConfusion:
    """``rubric evaluate meta --confusion``: the matrix of two ASSIGNED files (automatic,
    manual). The options of a meta-evaluation (``--reference``, ``-m``, ``--per-topic``,
    ``--label-runs``) are refused before any file is read."""
    for option, given in (("reference", reference), ("measures", measures), ("per_topic", per_topic)):
        if given:
            raise UserError(f"{{{option}}}: not used with {{confusion}}", option, "confusion")
    if label_runs:
        raise UserError("{label_runs}: not used with {confusion}", "label_runs", "confusion")
    if len(assigned) != 2:
        raise UserError(
            f"{{confusion}}: give two ASSIGNED files (automatic, manual), got {len(assigned)}", "confusion"
        )
    return assignment_confusion(assigned[0], assigned[1], queries)
