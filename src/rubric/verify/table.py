"""A small report table and its renderings: TSV, CSV, Markdown and LaTeX (booktabs).

Reports build :class:`Table` objects (a ranx-style report object: data first, formatting last),
so every report gets every format from one place and tests can look at the cells directly.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rubric.errors import UserError

FORMATS = ("tsv", "csv", "md", "latex")

Cell = str | int | float | None


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
    """A titled table; ``notes`` are printed under it (Markdown/LaTeX) or as ``#`` lines (TSV)."""

    header: list[str]
    rows: list[list[Cell]]
    title: str = ""
    notes: list[str] = field(default_factory=list)

    def cells(self) -> list[list[str]]:
        return [[_one_line(fmt_cell(c)) for c in row] for row in self.rows]

    def to_tsv(self) -> str:
        lines = [f"# {self.title}"] if self.title else []
        lines.append("\t".join(self.header))
        lines.extend("\t".join(c.replace("\t", " ") for c in row) for row in self.cells())
        lines.extend(f"# {n}" for n in self.notes)
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.header)
        w.writerows(self.cells())
        return buf.getvalue()

    def to_markdown(self) -> str:
        def esc(s: str) -> str:
            return s.replace("|", "\\|")

        lines = [f"### {self.title}", ""] if self.title else []
        lines.append("| " + " | ".join(esc(h) for h in self.header) + " |")
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines.extend("| " + " | ".join(esc(c) for c in row) + " |" for row in self.cells())
        if self.notes:
            lines.append("")
            lines.extend(self.notes)
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``); numbers right-aligned."""
        numeric = [all(_is_number(r[i]) for r in self.rows) and self.rows for i in range(len(self.header))]
        spec = "".join("r" if n else "l" for n in numeric)
        lines = []
        if self.title:
            lines.append(f"% {latex_escape(self.title)}")
        lines += [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
        lines.append(" & ".join(latex_escape(h) for h in self.header) + " \\\\")
        lines.append("\\midrule")
        lines.extend(" & ".join(latex_escape(c) for c in row) + " \\\\" for row in self.cells())
        lines += ["\\bottomrule", "\\end{tabular}"]
        lines.extend(f"% {latex_escape(n)}" for n in self.notes)
        return "\n".join(lines) + "\n"

    def render(self, fmt: str) -> str:
        return {"tsv": self.to_tsv, "csv": self.to_csv, "md": self.to_markdown, "latex": self.to_latex}[
            check_format(fmt)
        ]()


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
    if fmt not in allowed:
        raise UserError(f"--format: expected one of {', '.join(allowed)}, got {fmt!r}")
    return fmt


def render_tables(tables: Sequence[Table], fmt: str) -> str:
    """Several tables in one output, separated by a blank line (CSV: only the first has a title)."""
    return "\n".join(t.render(fmt) for t in tables)


def emit(text: str, output: Path | None) -> None:
    """Write the report to ``output`` (by the output rule of :mod:`rubric.data.files`) or stdout."""
    from rubric.data.files import STDIO, write_output

    write_output(STDIO if output is None else output, text)
