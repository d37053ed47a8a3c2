"""Nugget scores of RAG answers (TREC 2024 RAG, "The Great Nugget Recall" §4.4).

Per (run, query), over the query's nuggets with their assignment:

- ``A_strict`` = supported / all nuggets; ``V_strict`` = supported vital / vital nuggets;
- ``A_partial`` and ``V_partial`` count partial_support as 0.5 (the non-strict variants).

A run's score is the mean over queries, with the standard error (sample sd / sqrt(n)). The
queries are all queries of the ASSIGNED file; a run with no answer for one of them scores 0
there (a missing answer recalls no nugget), and the count is reported. ``V_*`` is undefined for
a query without vital nuggets: that query is left out of the V means (``n`` says how many
counted). A nugget without an assignment (a failed batch) is an error, not a zero.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric.data.files import write_output
from rubric.data.json_line import id_text
from rubric.data.jsonl import iter_json_lines
from rubric.data.query_selection import Queries, QuerySelection, absent_note
from rubric.data.table import check_format
from rubric.errors import UserError
from rubric.evaluate.report import FORMATS, Rendered, Report, Score, standard_error

MEASURES = ("V_strict", "V_partial", "A_strict", "A_partial")
CREDIT_STRICT = {"support": 1.0, "partial_support": 0.0, "not_support": 0.0}
CREDIT_PARTIAL = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}


@dataclass
class QueryScore:
    run_id: str
    query_id: str
    scores: dict[str, float | None]
    nuggets: int
    vital: int
    missing: bool = False


@dataclass
class RunScore:
    run_id: str
    means: dict[str, float | None]
    stderrs: dict[str, float | None]
    counts: dict[str, int]
    missing_queries: list[str] = field(default_factory=list)


def score_nuggets(nuggets: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """The four scores of one answer from its nuggets' importance and assignment."""
    vital = [n for n in nuggets if n.get("importance") == "vital"]

    def mean(items: Sequence[dict[str, Any]], credit: dict[str, float]) -> float | None:
        return sum(credit[n["assignment"]] for n in items) / len(items) if items else None

    return {
        "V_strict": mean(vital, CREDIT_STRICT),
        "V_partial": mean(vital, CREDIT_PARTIAL),
        "A_strict": mean(nuggets, CREDIT_STRICT),
        "A_partial": mean(nuggets, CREDIT_PARTIAL),
    }


def iter_assigned(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of an ASSIGNED file, checked (fields, labels, one record per (run, query));
    problems name file:line."""
    seen: set[tuple[str, str]] = set()
    for line_no, rec in iter_json_lines(path):
        where = f"{path}:{line_no}"
        if not isinstance(rec, dict):
            raise UserError(f"{where}: expected an ASSIGNED record (a JSON object)")
        for name in ("run_id", "query_id", "nuggets"):
            if name not in rec:
                raise UserError(f"{where}: missing field {name!r}")
        if not isinstance(rec["nuggets"], list) or not rec["nuggets"]:
            raise UserError(f"{where}: 'nuggets' must be a non-empty list")
        key = (id_text(where, "run_id", rec["run_id"]), id_text(where, "query_id", rec["query_id"]))
        if key in seen:
            raise UserError(f"{where}: run {key[0]} query {key[1]} appears twice")
        seen.add(key)
        for i, n in enumerate(rec["nuggets"]):
            label = n.get("assignment") if isinstance(n, dict) else None
            if label is None:
                raise UserError(
                    f"{where}: nuggets[{i}] has no assignment (its LLM call failed); "
                    "re-run `rubric grade assign` to retry the failed batches"
                )
            if label not in CREDIT_STRICT:
                raise UserError(f"{where}: nuggets[{i}].assignment: unknown label {label!r}")
            if n.get("importance") not in (None, "vital", "okay"):
                raise UserError(f"{where}: nuggets[{i}].importance: expected vital or okay")
        yield rec
    if not seen:
        raise UserError(f"{path}: the file holds no assignments")


def read_assigned(path: str | Path) -> list[QueryScore]:
    """Score every record of an ASSIGNED file; problems name file:line."""
    out: list[QueryScore] = []
    for rec in iter_assigned(path):
        nuggets = rec["nuggets"]
        out.append(
            QueryScore(
                run_id=str(rec["run_id"]),
                query_id=str(rec["query_id"]),
                scores=score_nuggets(nuggets),
                nuggets=len(nuggets),
                vital=sum(n.get("importance") == "vital" for n in nuggets),
            )
        )
    return out


def aggregate(scores: list[QueryScore]) -> tuple[list[QueryScore], list[RunScore]]:
    """Per-query scores (with zeros for missing answers) and per-run means, best V_strict first."""
    queries = list(dict.fromkeys(s.query_id for s in scores))
    template = {s.query_id: s for s in scores}
    runs = list(dict.fromkeys(s.run_id for s in scores))
    have = {(s.run_id, s.query_id): s for s in scores}
    rows: list[QueryScore] = []
    summaries: list[RunScore] = []
    for run in runs:
        run_rows, missing = [], []
        for q in queries:
            row = have.get((run, q))
            if row is None:
                t = template[q]
                zero = {m: (0.0 if (t.vital or not m.startswith("V")) else None) for m in MEASURES}
                row = QueryScore(run, q, zero, t.nuggets, t.vital, missing=True)
                missing.append(q)
            run_rows.append(row)
        rows.extend(run_rows)
        means, stderrs, counts = {}, {}, {}
        for m in MEASURES:
            values = [v for r in run_rows if (v := r.scores[m]) is not None]
            means[m] = sum(values) / len(values) if values else None
            stderrs[m] = standard_error(values) if len(values) > 1 else None
            counts[m] = len(values)
        summaries.append(RunScore(run, means, stderrs, counts, missing))
    summaries.sort(key=lambda r: -(r.means["V_strict"] if r.means["V_strict"] is not None else -1.0))
    return rows, summaries


@dataclass(repr=False)  # Report's short table
class NuggetReport(Report):
    """Nugget scores as a :class:`~rubric.evaluate.report.Report` (TSV, JSON, LaTeX, ``values``),
    runs best V_strict first, with the per-(run, query) rows behind them (:meth:`per_query_tsv`).

    A measure undefined for a run (no query with vital nuggets) has the value NaN; its JSON
    rendering, one array per run as JSON lines, writes it as ``null``.
    """

    rows: list[QueryScore] = field(default_factory=list)
    runs_scored: list[RunScore] = field(default_factory=list)

    def sort(self) -> None:
        """Kept as :func:`aggregate` orders the runs (best V_strict first, ties in file order)."""

    def to_json(self, *, per_query: bool = False) -> str:
        lines = []
        for r in self.runs_scored:
            entries = [
                {
                    "run": r.run_id,
                    "measure": m,
                    "value": r.means[m],
                    "stderr": r.stderrs[m],
                    "n_queries": r.counts[m],
                }
                for m in MEASURES
            ]
            lines.append(json.dumps(entries) + "\n")
        return "".join(lines)

    def per_query_tsv(self, digits: int = 4) -> str:
        """``run query V_strict V_partial A_strict A_partial nuggets vital answered``, a line per
        (run, query); an undefined score is empty, a missing answer scores 0 with answered 0."""

        def num(v: float | None) -> str:
            return "" if v is None else f"{v:.{digits}f}"

        lines = ["\t".join(["run", "query", *MEASURES, "nuggets", "vital", "answered"])]
        for r in self.rows:
            values = [num(r.scores[m]) for m in MEASURES]
            lines.append(
                "\t".join(
                    [r.run_id, r.query_id, *values, str(r.nuggets), str(r.vital), str(int(not r.missing))]
                )
            )
        return "\n".join(lines) + "\n"


def nugget_scores(assigned: str | Path, queries: Queries = None) -> NuggetReport:
    """The nugget scores of the runs of an ASSIGNED file (from ``rubric grade assign``), over the
    selected ``queries`` (default: all of the file's); notes say which selected queries the file
    lacks and which runs miss answers (scored 0)."""
    chosen = QuerySelection.of(queries)
    scored = read_assigned(assigned)
    notes = []
    if line := absent_note(
        chosen.check_present([s.query_id for s in scored], str(assigned)), str(assigned), "selected"
    ):
        notes.append(line)
    rows, runs = aggregate(list(chosen.select(scored, lambda s: s.query_id)))
    scores = [
        Score(
            run=r.run_id,
            measure=m,
            value=float("nan") if (mean := r.means[m]) is None else mean,
            per_query={
                q.query_id: v for q in rows if q.run_id == r.run_id and (v := q.scores[m]) is not None
            },
        )
        for r in runs
        for m in MEASURES
    ]
    notes += [
        f"run {r.run_id}: no answer for {len(r.missing_queries)} queries (scored 0)"
        for r in runs
        if r.missing_queries
    ]
    return NuggetReport(scores, title="nugget scores", notes=notes, rows=rows, runs_scored=runs)


def nuggets_output(
    assigned: str | Path, fmt: str = "tsv", per_query: str | Path | None = None, queries: Queries = None
) -> Rendered:
    """``rubric evaluate nuggets``: the leaderboard of :func:`nugget_scores` in ``fmt`` (one of
    :data:`~rubric.evaluate.report.FORMATS`, checked before any file is read) and its notes; the
    per-(run, query) scores are written to ``per_query`` (TSV, atomically) when it is given."""
    check_format(fmt, FORMATS)
    report = nugget_scores(assigned, queries)
    if per_query is not None:
        write_output(per_query, report.per_query_tsv())
    return Rendered(report.render(fmt), report.notes)
