"""Report objects: scores of runs, with per-query values kept, written as TSV, JSON or LaTeX.

Like ranx's ``Report``: the library returns an object, the CLI only chooses the format. Every
score keeps its per-query values, so a standard error (sample standard deviation / sqrt(n)),
a significance test or a correlation can be computed from the same object later.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rubric.data.table import counted, latex_escape

if TYPE_CHECKING:
    import pandas

REPR_RUNS = 10
"""Runs a report's ``repr`` shows (the rest are counted)."""
HTML_RUNS = 100
"""Runs its HTML table shows in a notebook."""


@dataclass
class Score:
    """One run's score for one measure: the summary value and the per-query values behind it."""

    run: str
    measure: str
    value: float
    per_query: dict[str, float] = field(default_factory=dict)
    mean_aggregate: bool = True  # False for sums (counts) and geometric means: no standard error

    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    @property
    def stderr(self) -> float:
        """Sample standard deviation of the per-query values over sqrt(n) (NaN if undefined)."""
        return standard_error(list(self.per_query.values())) if self.mean_aggregate else math.nan


def standard_error(values: list[float]) -> float:
    """Sample standard deviation over sqrt(n), as trec_eval users report it (NaN below two values)."""
    n = len(values)
    if n < 2:
        return math.nan
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return math.sqrt(variance / n)


def _fmt(value: float, digits: int) -> str:
    return "" if value != value else f"{value:.{digits}f}"


def short_table(heading: str, rows: list[list[str]], more: str = "", names: int = 1) -> str:
    """A report's ``repr`` in a notebook: ``heading``, then ``rows`` (the header and the rows
    shown) in aligned columns, the first ``names`` (run names, measures) left-aligned and the
    numbers right-aligned, then ``more`` (what was left out), so a reader sees the top of a
    leaderboard at a glance instead of a dataclass dump."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [heading]
    for row in rows:
        lines.append(
            "  ".join(
                c.ljust(w) if i < names else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    if more:
        lines.append(more)
    return "\n".join(line.rstrip() for line in lines)


def left_out(n: int, rows: str = "runs") -> str:
    """The line under a short table that counts the ``rows`` it leaves out (none: empty)."""
    return f"... {n} more {rows}" if n else ""


def html_table(caption: str, rows: list[list[str]], more: str = "") -> str:
    """The same table as HTML for Jupyter's ``_repr_html_`` (every cell escaped)."""
    from html import escape

    head = "".join(f"<th>{escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    tail = f"<p>{escape(more)}</p>" if more else ""
    caption = f"<caption>{escape(caption)}</caption>"
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}"


FORMATS = ("tsv", "json", "latex")
"""The formats every report object renders (``render(fmt)``)."""


@dataclass(repr=False)
class Report:
    """Scores of several runs for several measures, ordered best first by the first measure."""

    scores: list[Score]
    title: str = "leaderboard"
    notes: list[str] = field(default_factory=list)  # what a reader should know (the CLI prints them)

    def __post_init__(self) -> None:
        self.sort()

    @property
    def measures(self) -> list[str]:
        return list(dict.fromkeys(s.measure for s in self.scores))

    @property
    def runs(self) -> list[str]:
        return list(dict.fromkeys(s.run for s in self.scores))

    def sort(self) -> None:
        """Runs by the first measure, descending (ties by run name); measures in their order."""
        if not self.scores:
            return
        order = {m: i for i, m in enumerate(self.measures)}
        first = self.measures[0]
        key_value = {s.run: s.value for s in self.scores if s.measure == first}
        self.scores.sort(key=lambda s: (-key_value.get(s.run, -math.inf), s.run, order[s.measure]))

    def get(self, run: str, measure: str) -> Score:
        for s in self.scores:
            if s.run == run and s.measure == measure:
                return s
        raise KeyError((run, measure))

    def values(self, measure: str | None = None) -> dict[str, float]:
        """``{run: value}`` for one measure (the first by default)."""
        measure = measure or self.measures[0]
        return {s.run: s.value for s in self.scores if s.measure == measure}

    # --- in a notebook: a short table, an HTML table, a DataFrame ------------------------------

    def wide_rows(self, digits: int = 4) -> list[list[str]]:
        """The header ``run`` + measures and one row per run, best first (``--`` where a run has
        no score for a measure)."""
        cells = {(s.run, s.measure): _fmt(s.value, digits) for s in self.scores}
        return [["run", *self.measures]] + [
            [run, *(cells.get((run, m), "--") for m in self.measures)] for run in self.runs
        ]

    def _shown(self, limit: int) -> tuple[list[list[str]], int]:
        rows = self.wide_rows()
        return rows[: limit + 1], max(0, len(rows) - 1 - limit)

    def __repr__(self) -> str:
        """A short table: the first runs by the first measure, one line each (the whole report is
        :meth:`to_tsv` or :meth:`to_dataframe`)."""
        rows, more = self._shown(REPR_RUNS)
        size = f"{counted(len(self.runs), 'run')} x {counted(len(self.measures), 'measure')}"
        return short_table(f"<{type(self).__name__} {self.title!r}: {size}>", rows, left_out(more))

    def _repr_html_(self) -> str:
        """The same table as HTML, for Jupyter (every run up to :data:`HTML_RUNS`)."""
        rows, more = self._shown(HTML_RUNS)
        return html_table(self.title, rows, left_out(more))

    def to_dataframe(self, *, per_query: bool = False) -> pandas.DataFrame:
        """The long table (``run measure value stderr n_queries``, as :meth:`to_tsv`, NaN where a
        value is undefined; with ``per_query`` one row per run, measure and query) as a pandas
        DataFrame. pandas is
        imported here, only when called (``pip install 'rubric-workbench[notebook]'``)."""
        from rubric.extras import load

        pd = load("notebook", "pandas", "a DataFrame")
        if per_query:
            return pd.DataFrame(
                [(s.run, s.measure, q, v) for s in self.scores for q, v in s.per_query.items()],
                columns=["run", "measure", "query", "value"],
            )
        return pd.DataFrame(
            [(s.run, s.measure, s.value, s.stderr, s.n_queries) for s in self.scores],
            columns=["run", "measure", "value", "stderr", "n_queries"],
        )

    # --- writers -------------------------------------------------------------------------------

    def long_rows(self, digits: int = 4, *, per_query: bool = False) -> list[list[str]]:
        """The header and rows of the long table: ``run measure value stderr n_queries``; with
        ``per_query``: ``run measure query value`` (and the ``all`` row of each score)."""
        if per_query:
            out = [["run", "measure", "query", "value"]]
            for s in self.scores:
                out.extend([s.run, s.measure, q, _fmt(v, digits)] for q, v in s.per_query.items())
                out.append([s.run, s.measure, "all", _fmt(s.value, digits)])
            return out
        out = [["run", "measure", "value", "stderr", "n_queries"]]
        out.extend(
            [s.run, s.measure, _fmt(s.value, digits), _fmt(s.stderr, digits), str(s.n_queries)]
            for s in self.scores
        )
        return out

    def to_tsv(self, digits: int = 4, *, per_query: bool = False) -> str:
        """``run measure value stderr n_queries``; with ``per_query``: ``run measure query value``."""
        return "".join("\t".join(row) + "\n" for row in self.long_rows(digits, per_query=per_query))

    def to_csv(self, digits: int = 4, *, per_query: bool = False) -> str:
        """The rows of :meth:`to_tsv` as CSV (quoted where a run name needs it)."""
        import csv
        import io

        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(self.long_rows(digits, per_query=per_query))
        return buf.getvalue()

    def to_dict(self, *, per_query: bool = False) -> list[dict]:
        rows = []
        for s in self.scores:
            row = {
                "run": s.run,
                "measure": s.measure,
                "value": s.value,
                "stderr": None if s.stderr != s.stderr else s.stderr,
                "n_queries": s.n_queries,
            }
            if per_query:
                row["per_query"] = s.per_query
            rows.append(row)
        return rows

    def to_json(self, *, per_query: bool = False) -> str:
        return json.dumps(self.to_dict(per_query=per_query), indent=1) + "\n"

    def to_latex(self, digits: int = 3) -> str:
        """A booktabs table: one row per run, one column per measure, best value in bold."""
        measures = self.measures
        best = {m: max((s.value for s in self.scores if s.measure == m), default=math.nan) for m in measures}
        lines = [
            "\\begin{tabular}{l" + "r" * len(measures) + "}",
            "\\toprule",
            "Run & " + " & ".join(latex_escape(m) for m in measures) + " \\\\",
            "\\midrule",
        ]
        for run in self.runs:
            cells = []
            for m in measures:
                try:
                    s = self.get(run, m)
                except KeyError:
                    cells.append("--")
                    continue
                text = _fmt(s.value, digits)
                if s.value == best[m]:
                    text = f"\\textbf{{{text}}}"
                if s.stderr == s.stderr:
                    text += f" {{\\scriptsize $\\pm${_fmt(s.stderr, digits)}}}"
                cells.append(text)
            lines.append(latex_escape(run) + " & " + " & ".join(cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"

    def render(self, fmt: str, digits: int = 4, *, per_query: bool = False) -> str:
        if fmt == "csv":
            return self.to_csv(digits, per_query=per_query)
        if fmt == "json":
            return self.to_json(per_query=per_query)
        if fmt == "latex":
            return self.to_latex(min(digits, 3))
        return self.to_tsv(digits, per_query=per_query)


@dataclass
class Rendered:
    """A report as a command writes it: ``text`` (for stdout or ``-o``) and the lines a reader
    should see on stderr: ``before`` the text is written (what was left out) and after (``notes``).

    The library builds it, so the CLI only writes it; the split keeps the order of stderr lines
    when ``-o`` adds its own ``wrote FILE`` between them.
    """

    text: str
    notes: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
