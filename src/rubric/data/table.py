"""A small report table and its renderings: TSV, CSV, Markdown and LaTeX (booktabs).

Reports build :class:`Table` objects (a ranx-style report object: data first, formatting last),
so every report gets every format from one place and tests can look at the cells directly.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rubric.errors import one_of

FORMATS = ("tsv", "csv", "md", "latex")

Cell = str | int | float | None


def counted(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``1 query``, ``2 queries``, ``2 batches``: a count with its noun,
    singular for one (English plurals of the nouns we count: -y after a consonant, -s/-x/-ch/-sh)."""
    if n == 1:
        return f"{n} {noun}"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return f"{n} {noun[:-1]}ies"
    return f"{n} {noun}es" if noun.endswith(("s", "x", "ch", "sh")) else f"{n} {noun}s"


def fmt_cell(value: Cell, digits: int = 4) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Table:
    """A titled table; ``notes`` are printed under it (Markdown/LaTeX) or as ``#`` lines (TSV).

    ``rows`` may be an iterator (a report over a huge file): the TSV, CSV and Markdown renderings
    then stream (:meth:`chunks`) and the table renders once; a generator of rows may add to
    ``notes`` when it ends, since notes come after the rows.
    """

    header: list[str]
    rows: Iterable[list[Cell]]
    title: str = ""
    notes: list[str] = field(default_factory=list)

    def cells(self) -> Iterator[list[str]]:
        return ([_one_line(fmt_cell(c)) for c in row] for row in self.rows)

    def tsv_chunks(self) -> Iterator[str]:
        if self.title:
            yield f"# {self.title}\n"
        yield "\t".join(self.header) + "\n"
        for row in self.cells():
            yield "\t".join(c.replace("\t", " ") for c in row) + "\n"
        for n in self.notes:
            yield f"# {n}\n"

    def csv_chunks(self) -> Iterator[str]:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.header)
        for i, row in enumerate(self.cells()):
            w.writerow(row)
            if i % 1000 == 999:
                yield buf.getvalue()
                buf.seek(0)
                buf.truncate()
        yield buf.getvalue()

    def markdown_chunks(self) -> Iterator[str]:
        def esc(s: str) -> str:
            return s.replace("|", "\\|")

        if self.title:
            yield f"### {self.title}\n\n"
        yield "| " + " | ".join(esc(h) for h in self.header) + " |\n"
        yield "|" + "|".join("---" for _ in self.header) + "|\n"
        for row in self.cells():
            yield "| " + " | ".join(esc(c) for c in row) + " |\n"
        if self.notes:
            yield "\n"
            for n in self.notes:
                yield n + "\n"

    def latex_chunks(self) -> Iterator[str]:
        """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``); numbers right-aligned. The
        column alignment depends on every row, so the rows are held."""
        rows = list(self.rows)
        numeric = [all(_is_number(r[i]) for r in rows) and rows for i in range(len(self.header))]
        spec = "".join("r" if n else "l" for n in numeric)
        lines = []
        if self.title:
            lines.append(f"% {latex_escape(self.title)}")
        lines += [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
        lines.append(" & ".join(latex_escape(h) for h in self.header) + " \\\\")
        lines.append("\\midrule")
        lines.extend(
            " & ".join(latex_escape(c) for c in row) + " \\\\"
            for row in ([_one_line(fmt_cell(c)) for c in r] for r in rows)
        )
        lines += ["\\bottomrule", "\\end{tabular}"]
        lines.extend(f"% {latex_escape(n)}" for n in self.notes)
        yield "\n".join(lines) + "\n"

    def chunks(self, fmt: str) -> Iterator[str]:
        """The rendering in ``fmt`` piece by piece."""
        return {
            "tsv": self.tsv_chunks,
            "csv": self.csv_chunks,
            "md": self.markdown_chunks,
            "latex": self.latex_chunks,
        }[check_format(fmt)]()

    def to_tsv(self) -> str:
        return "".join(self.tsv_chunks())

    def to_csv(self) -> str:
        return "".join(self.csv_chunks())

    def to_markdown(self) -> str:
        return "".join(self.markdown_chunks())

    def to_latex(self) -> str:
        return "".join(self.latex_chunks())

    def render(self, fmt: str) -> str:
        return "".join(self.chunks(fmt))


def _is_number(value: Cell) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def check_format(fmt: str, allowed: Sequence[str] = FORMATS) -> str:
    """``--format`` must be one of ``allowed`` (the formats of the report at hand)."""
    return one_of("fmt", fmt, allowed)


def render_tables(tables: Iterable[Table], fmt: str) -> str:
    """Several tables in one output, separated by a blank line (CSV: only the first has a title)."""
    return "".join(table_chunks(tables, fmt))


def table_chunks(tables: Iterable[Table], fmt: str) -> Iterator[str]:
    """:func:`render_tables` piece by piece, for tables (and rows) that come one at a time."""
    for i, t in enumerate(tables):
        if i:
            yield "\n"
        yield from t.chunks(fmt)


def emit_tables(tables: Iterable[Table], fmt: str, output: Path | None) -> None:
    """Write tables to ``output`` (or stdout) as they are rendered: a report over a huge file
    never holds its whole text."""
    from rubric.data.files import STDIO, open_output

    with open_output(STDIO if output is None else output) as f:
        for chunk in table_chunks(tables, fmt):
            f.write(chunk)
