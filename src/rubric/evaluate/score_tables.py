"""Per-(run, query) score tables: the input of a meta-evaluation, in every format the tools write.

A meta-evaluation compares two evaluations of the same runs topic by topic, so it needs every
run's score on every query, not only the run means. The formats people have:

* our ``evaluate leaderboard -q`` / ``evaluate cover -q`` TSV: ``run measure query value``, with
  a ``query = all`` row per (run, measure) holding the run's summary;
* our ``evaluate nuggets -o`` TSV: ``run query V_strict V_partial A_strict A_partial ...``, one
  column per measure (any TSV with ``run`` and ``query`` columns reads this way; an empty cell is
  an undefined value, e.g. V_strict of a query without vital nuggets);
* trec_eval ``-q`` output: ``measure<TAB>qid<TAB>value``, one file per run (the run's name from its
  ``runid`` line, else from the file name); a file holding several runs must carry ``runid``
  lines, which trec_eval prints after each run's per-query lines;
* run-level only: our leaderboard TSV without ``-q`` (``run measure value ...``), a TSV of
  ``run<TAB>score``, or an official ``{"run": rank}`` JSON (ranks: lower is better).

A folder stands for all its files; several files of one side are merged, and a (run, measure,
query) given twice is an error naming both files.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.files import read_text
from rubric.data.json_line import load_json
from rubric.errors import UserError

#: Columns of per-query TSVs that describe a row rather than score it (nuggets -o writes them).
BOOKKEEPING = frozenset({"run", "query", "nuggets", "vital", "answered", "stderr", "n_queries"})
#: The measure name of a file that holds one unnamed score per run (``run<TAB>score``, ranks JSON).
UNNAMED = "score"

PerQuery = dict[str, dict[str, dict[str, float]]]  # measure -> run -> query -> value
Summary = dict[str, dict[str, float]]  # measure -> run -> value


@dataclass
class ScoreTable:
    """Scores of runs: per query where the source has them, and run summaries ('all' rows).

    ``are_ranks``: the summaries are official ranks (1 = best), as in ``{"run": rank}`` JSON.
    """

    source: str
    per_query: PerQuery = field(default_factory=dict)
    summary: Summary = field(default_factory=dict)
    are_ranks: bool = False

    @property
    def measures(self) -> list[str]:
        return list(dict.fromkeys([*self.per_query, *self.summary]))

    def has_topics(self, measure: str) -> bool:
        return bool(self.per_query.get(measure))

    def resolve(self, measure: str) -> str:
        """The name this table uses for ``measure``: as given, else in trec_eval's printed form
        (``ndcg_cut.10`` = ``ndcg_cut_10``) or another case; an error lists what it holds."""
        names = self.measures
        if measure in names:
            return measure
        by_key = {_key(n): n for n in names}
        if _key(measure) in by_key:
            return by_key[_key(measure)]
        raise UserError(f"{self.source}: no scores for measure {measure!r}; it holds {', '.join(names)}")

    def only_measure(self) -> str | None:
        names = self.measures
        return names[0] if len(names) == 1 else None


def _key(measure: str) -> str:
    """Names that denote the same measure share this key: ``P.5`` ~ ``P_5`` ~ ``p_5``."""
    return measure.lower().replace(".", "_")


# --- reading ---------------------------------------------------------------------------------


class _Builder:
    """Collects rows from several files, refusing a (run, measure, query) given twice."""

    def __init__(self, source: str) -> None:
        self.table = ScoreTable(source)
        self.where: dict[tuple[str, str, str], str] = {}

    def put(self, where: str, run: str, measure: str, query: str, value: float) -> None:
        key = (measure, run, query)
        if key in self.where:
            raise UserError(
                f"{where}: run {run} measure {measure} query {query} is already in {self.where[key]}"
            )
        self.where[key] = where
        if query == "all":
            self.table.summary.setdefault(measure, {})[run] = value
        else:
            self.table.per_query.setdefault(measure, {}).setdefault(run, {})[query] = value


def _number(text: str, where: str) -> float:
    """A score: a finite number (NaN and infinity rank nowhere; `evaluate correlate` refuses them too)."""
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{where}: expected a number, found {text!r}") from None
    if not math.isfinite(value):
        raise UserError(f"{where}: expected a finite number, found {text!r}")
    return value


def read_score_table(paths: str | Path | Iterable[str | Path], source: str | None = None) -> ScoreTable:
    """One side of a meta-evaluation from files and folders (their files, in name order)."""
    from rubric.data.trec import expand_paths

    given = [paths] if isinstance(paths, str | Path) else list(paths)
    if not given:
        raise UserError("no score table given")
    files = expand_paths(given)
    builder = _Builder(source or ", ".join(str(p) for p in given))
    for path in files:
        _read_file(path, builder)
    table = builder.table
    if not table.measures:
        raise UserError(f"{table.source}: no scores found")
    if table.are_ranks and len(files) > 1:
        raise UserError(f"{table.source}: an official {{'run': rank}} JSON must be the only file of its side")
    return table


def _read_file(path: Path, builder: _Builder) -> None:
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        _read_ranks(path, text, builder)
        return
    lines = [
        (n, line)
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.startswith("#")
    ]
    if not lines:
        raise UserError(f"{path}: no rows")
    first = lines[0][1].split("\t")
    header = [c.strip() for c in first]
    if len(first) == 2:
        _read_two_columns(path, lines, builder)
    elif "run" in header:
        _read_tsv(path, lines, header, builder)
    elif _looks_trec_eval(lines):
        _read_trec_eval(path, lines, builder)
    else:
        raise UserError(
            f"{path}:{lines[0][0]}: not a score table: expected a TSV with a 'run' column, trec_eval -q "
            'output (measure, query, value), run<TAB>score, or {"run": rank} JSON'
        )


def is_number(text: str) -> bool:
    """Does the text parse as a float (a header cell does not)?"""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _looks_trec_eval(lines: list[tuple[int, str]]) -> bool:
    """Three whitespace-separated columns with a number (or a runid) last: trec_eval's output."""
    head = lines[:20]
    return all(
        len(cols := line.split()) == 3 and (is_number(cols[2]) or cols[0] == "runid") for _, line in head
    )


def _read_ranks(path: Path, text: str, builder: _Builder) -> None:
    try:
        data = load_json(str(path), text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(data, dict) or not data:
        raise UserError(f'{path}: expected {{"run": rank}}')
    for run, rank in data.items():
        if not isinstance(rank, int | float) or isinstance(rank, bool) or not math.isfinite(rank):
            raise UserError(f'{path}: expected {{"run": rank}} with numbers, found {rank!r} for {run}')
        builder.put(str(path), str(run), UNNAMED, "all", float(rank))
    builder.table.are_ranks = True


def _read_tsv(path: Path, lines: list[tuple[int, str]], header: list[str], builder: _Builder) -> None:
    rows = [(n, next(csv.reader([line], delimiter="\t"))) for n, line in lines[1:]]
    i_run = header.index("run")
    if {"measure", "value"} <= set(header):  # long: our leaderboard / cover TSV (-q or not)
        i_measure, i_value = header.index("measure"), header.index("value")
        i_query = header.index("query") if "query" in header else None
        for n, r in rows:
            where = f"{path}:{n}"
            if len(r) <= max(i_run, i_measure, i_value, i_query or 0):
                raise UserError(f"{where}: expected {len(header)} columns, found {len(r)}")
            if r[i_value] == "":
                continue
            query = r[i_query] if i_query is not None else "all"
            builder.put(where, r[i_run], r[i_measure], query, _number(r[i_value], where))
        return
    if "query" not in header:
        raise UserError(
            f"{path}:{lines[0][0]}: a TSV with a 'run' column needs 'query' (per-query scores, one column "
            "per measure) or 'measure' and 'value' columns"
        )
    i_query = header.index("query")
    measures = [(i, h) for i, h in enumerate(header) if h not in BOOKKEEPING]
    if not measures:
        raise UserError(f"{path}:{lines[0][0]}: no measure columns besides {', '.join(header)}")
    for n, r in rows:
        where = f"{path}:{n}"
        if len(r) != len(header):
            raise UserError(f"{where}: expected {len(header)} columns, found {len(r)}")
        for i, measure in measures:
            if r[i] != "":  # empty: undefined there (V_* of a query without vital nuggets)
                builder.put(where, r[i_run], measure, r[i_query], _number(r[i], where))


def _read_two_columns(path: Path, lines: list[tuple[int, str]], builder: _Builder) -> None:
    start = 0 if is_number(lines[0][1].split("\t")[1]) else 1  # a header line is skipped
    for n, line in lines[start:]:
        cols = line.split("\t")
        if len(cols) != 2:
            raise UserError(f"{path}:{n}: expected run<TAB>score")
        builder.put(f"{path}:{n}", cols[0], UNNAMED, "all", _number(cols[1], f"{path}:{n}"))


def _read_trec_eval(path: Path, lines: list[tuple[int, str]], builder: _Builder) -> None:
    """trec_eval -q output, one run or several separated by their runid lines."""
    from rubric.data.trec import run_name_from_file

    blocks: list[tuple[str | None, list[tuple[str, str, str, str]]]] = []
    name: str | None = None
    rows: list[tuple[str, str, str, str]] = []
    seen_all = False
    for n, line in lines:
        cols = line.split()
        where = f"{path}:{n}"
        if len(cols) != 3:
            raise UserError(
                f"{where}: trec_eval output has 3 columns (measure, query, value), found {len(cols)}"
            )
        measure, query, value = cols
        if query != "all" and seen_all:  # the next run's per-query lines
            blocks.append((name, rows))
            name, rows, seen_all = None, [], False
        if measure == "runid":
            name = value
            continue
        seen_all = seen_all or query == "all"
        rows.append((where, measure, query, value))
    blocks.append((name, rows))
    if len(blocks) > 1 and any(b[0] is None for b in blocks):
        raise UserError(
            f"{path}: holds several runs without runid lines; give one file per run or add "
            "-m runid to trec_eval"
        )
    for block_name, block_rows in blocks:
        run = block_name or run_name_from_file(path)
        for where, measure, query, value in block_rows:
            builder.put(where, run, measure, query, _number(value, where))


def named(arg: str) -> tuple[str, str]:
    """``NAME=PATH`` gives a table a short name (:func:`~rubric.data.named.split_named`); a plain
    path is named by itself."""
    from rubric.data.named import split_named

    name, path = split_named(arg)
    return name or path, path


def read_conditions(args: Iterable[str]) -> list[tuple[str, ScoreTable]]:
    """The evaluations to check, one ``[NAME=]PATH`` each, named."""
    conditions = []
    for arg in args:
        name, path = named(arg)
        conditions.append((name, read_score_table(path, source=name)))
    return conditions


def read_reference(args: list[str]) -> ScoreTable:
    """The reference: its files form one table (e.g. one trec_eval -q file per run), named by
    ``NAME=`` or, for one file, by its path."""
    labelled = [named(r) for r in args]
    is_named = len(labelled) == 1 or labelled[0][0] != args[0]
    return read_score_table([p for _, p in labelled], source=labelled[0][0] if is_named else None)
