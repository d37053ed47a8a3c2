"""`rubric evaluate compare`: paired significance tests between runs, read and scored from files.

The tests themselves (t, randomization, bootstrap; Holm or Bonferroni) live in
:mod:`rubric.evaluate.paired`; this module evaluates the runs and writes the comparisons.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rubric.data.query_selection import Queries
from rubric.data.table import counted, fmt_cell
from rubric.errors import one_of
from rubric.evaluate.paired import CORRECTIONS, TESTS, Comparison, adjust, compare_scores
from rubric.evaluate.report import HTML_RUNS, REPR_RUNS, html_table, left_out, short_table


@dataclass(repr=False)
class Comparisons:
    """The pairwise tests of one call (a report object: TSV, JSON or LaTeX); ``significant``
    compares each adjusted p-value with ``alpha``."""

    rows: list[Comparison]
    alpha: float = 0.05
    notes: list[str] = field(default_factory=list)

    HEADER: ClassVar = (
        "run_a", "run_b", "measure", "mean_a", "mean_b", "diff", "p_value", "p_adjusted", "effect_size",
        "n_queries", "significant",
    )  # fmt: skip

    def significant(self, row: Comparison) -> bool:
        return row.p_adjusted == row.p_adjusted and row.p_adjusted < self.alpha

    def table(self) -> list[list[Any]]:
        return [
            [r.run_a, r.run_b, r.measure, r.mean_a, r.mean_b, r.diff, r.p_value, r.p_adjusted, r.effect_size,
             r.n_queries, "yes" if self.significant(r) else "no"]
            for r in self.rows
        ]  # fmt: skip

    # --- in a notebook: a short table of the pairs ---------------------------------------------

    def _short(self, limit: int) -> tuple[str, list[list[str]], str]:
        """The heading, the first ``limit`` pairs (difference, adjusted p-value, verdict) and the
        line counting the pairs left out."""
        rows = [["run_a", "run_b", "measure", "diff", "p_adjusted", "significant"]] + [
            [
                r.run_a,
                r.run_b,
                r.measure,
                fmt_cell(r.diff),
                fmt_cell(r.p_adjusted),
                "yes" if self.significant(r) else "no",
            ]
            for r in self.rows[:limit]
        ]
        found = sum(self.significant(r) for r in self.rows)
        size = counted(len(self.rows), "pair")
        heading = f"<{type(self).__name__}: {size}, {found} significant at alpha {self.alpha:g}>"
        return heading, rows, left_out(max(0, len(self.rows) - limit), "pairs")

    def __repr__(self) -> str:
        """The first pairs, one line each (all of them: :meth:`to_tsv`)."""
        heading, rows, below = self._short(REPR_RUNS)
        return short_table(heading, rows, below, names=3)

    def _repr_html_(self) -> str:
        """The same table as HTML, for Jupyter (every pair up to :data:`HTML_RUNS`)."""
        heading, rows, below = self._short(HTML_RUNS)
        return html_table(heading.strip("<>"), rows, below)

    def to_tsv(self, digits: int = 4) -> str:
        def f(x: Any) -> str:
            if isinstance(x, float):
                return "nan" if x != x else f"{x:.{digits}f}"
            return str(x)

        return "".join("\t".join(map(f, row)) + "\n" for row in [list(self.HEADER), *self.table()])

    def to_json(self) -> str:
        rows = [
            {
                k: (None if isinstance(v, float) and v != v else v)
                for k, v in zip(self.HEADER, row, strict=True)
            }
            for row in self.table()
        ]
        return json.dumps(rows, indent=1) + "\n"

    def to_latex(self, digits: int = 3) -> str:
        from rubric.data.table import Table

        cells = [[round(v, digits) if isinstance(v, float) else v for v in row] for row in self.table()]
        return Table(list(self.HEADER), cells).to_latex()

    def render(self, fmt: str = "tsv", digits: int = 4) -> str:
        if fmt == "json":
            return self.to_json()
        if fmt == "latex":
            return self.to_latex(min(digits, 3))
        return self.to_tsv(digits)


def compare(
    qrels: Any,
    runs: Any,
    measures: Iterable[Any] | str,
    *,
    test: str = "t",
    correction: str = "holm",
    baseline: str | None = None,
    level: int = 1,
    complete: bool = False,
    n_resamples: int = 10_000,
    seed: int = 42,
    alpha: float = 0.05,
    name_from: str = "tag",
    queries: Queries = None,
) -> Comparisons:
    """Score ``runs`` against ``qrels`` (paths or loaded objects, as for
    :func:`~rubric.evaluate.leaderboards.leaderboard`) and test every pair of runs (or each run
    against ``baseline``) on every measure; the p-values of all pairs and measures are corrected
    together (Holm by default). The defaults are the CLI's. Every option is checked before any
    file is read (``queries`` may be a function that reads them, called after the checks)."""
    from rubric.evaluate.leaderboards import evaluate

    one_of("test", test, TESTS)
    one_of("correction", correction, CORRECTIONS)
    done = evaluate(
        qrels, runs, measures, level=level, complete=complete, name_from=name_from, queries=queries
    )
    rows = []
    for m in done.results[0].values if done.results else []:
        per_query = {r.run: r.values[m] for r in done.results}
        rows.extend(
            compare_scores(
                per_query,
                m.label,
                test=test,
                correction="none",
                n_resamples=n_resamples,
                seed=seed,
                baseline=baseline,
            )
        )
    for row, p in zip(rows, adjust([r.p_value for r in rows], correction), strict=True):
        row.p_adjusted = p
    return Comparisons(rows, alpha, list(done.notes))
