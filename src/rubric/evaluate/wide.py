"""A leaderboard as a wide table: one row per run, one column per measure, as a paper prints it,
with optional significance marks against a baseline run (as ranx's report marks its cells).

The long TSV of `evaluate leaderboard` (run, measure, value, stderr, n_queries) is the one to
process further; this one is the one to read or paste: TSV or CSV, runs in leaderboard order.
A mark says that a run differs significantly from the baseline on that measure: ``+`` better,
``-`` worse (a paired test on the queries both have, corrected over the runs compared).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rubric.data.table import Table
from rubric.errors import UserError
from rubric.evaluate.report import Report


@dataclass(frozen=True)
class Marks:
    """Which significance test marks the cells: against ``baseline``, ``test`` (t, randomization
    or bootstrap) with ``correction`` over the runs of one measure, at ``alpha``."""

    baseline: str
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    resamples: int = 10_000
    seed: int = 42


@dataclass
class WideTable:
    """The table and the lines a reader should see with it (what the marks mean)."""

    table: Table
    notes: list[str] = field(default_factory=list)


def wide_table(report: Report, digits: int = 4, marks: Marks | None = None) -> WideTable:
    """``run, measure...`` rows of ``report`` (best first by its first measure), each value to
    ``digits`` decimals, followed by ``+``/``-`` where ``marks`` finds it significantly better or
    worse than the baseline."""
    measures, runs = report.measures, report.runs
    signs: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    if marks is not None:
        if marks.baseline not in runs:
            raise UserError(
                f"{{baseline}}: no run named {marks.baseline!r}; runs: {', '.join(runs)}", "baseline"
            )
        signs = _signs(report, marks)
        notes.append(
            f"+ / -: significantly better / worse than {marks.baseline} ({marks.test} test, "
            f"{marks.correction} correction over the {len(runs) - 1} runs of each measure, p < {marks.alpha})"
        )
    rows = []
    for run in runs:
        cells: list[str | int | float | None] = [run]
        for m in measures:
            try:
                value = report.get(run, m).value
            except KeyError:
                cells.append("")
                continue
            text = "" if value != value else f"{value:.{digits}f}"
            cells.append(text + signs.get((run, m), ""))
        rows.append(cells)
    return WideTable(Table(["run", *measures], rows), notes)


def _signs(report: Report, marks: Marks) -> dict[tuple[str, str], str]:
    from rubric.evaluate.paired import compare_scores

    signs = {}
    for m in report.measures:
        per_query = {s.run: s.per_query for s in report.scores if s.measure == m}
        rows = compare_scores(
            per_query,
            m,
            test=marks.test,
            correction=marks.correction,
            n_resamples=marks.resamples,
            seed=marks.seed,
            baseline=marks.baseline,
        )
        for row in rows:
            if row.p_adjusted == row.p_adjusted and row.p_adjusted < marks.alpha and row.diff != 0:
                signs[(row.run_b, m)] = "+" if row.diff > 0 else "-"
    return signs
