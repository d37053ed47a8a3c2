"""Rubric-Cover@k / EXAM-Cover (EXAM++ eq. 1): the share of a query's test items that a run's
first k passages answer (some passage grades the item at least ``min_grade``).

* Runs and their rankings come from the passages file (``paragraph_data.rankings``, written by
  ``rubric convert runs``); a run's first k passages are those with the k smallest ranks.
* The items of a query (the denominator) are the items of the bank when one is given, else the
  items that appear in the selected grades of that query (every graded item, answered or not).
* Queries are those evaluated: the file's queries (that are in the bank, when one is given).
  A query where a run has no passage scores 0, so every run is averaged over the same queries.
  ``complete`` (like trec_eval's ``-c``) averages over all of the bank's queries instead: a bank
  query the file lacks scores 0 for every run. The bank's queries the file lacks are listed in
  the report's notes either way.
* ``normalized`` divides by the items that some passage of the pool answers instead of all items
  (a query where no pooled passage answers any item scores 0).
* ``correct_answered``: the original tool's mode without self-ratings: an item is answered by a
  passage when it is in the grade's ``correctAnswered`` list (``min_grade`` is not used), and
  without a bank the items of a query are those in its ``correctAnswered`` and ``wrongAnswered``
  lists.
* ``overall`` adds the original tool's ``_overall_`` row: per query the share of items that any
  passage of the file answers, whatever its rank (the upper bound of every run's Cover); with
  ``normalized`` it is 1.0 for every query, as the original wrote it.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from rubric.data.grade_filter import DIRECT, ITEM_TYPES, GradeFilter, GradeKind, resolve_kind
from rubric.data.grade_table import GradedLike, open_graded
from rubric.data.graded import QueryRecord
from rubric.data.models import TestBank
from rubric.data.query_selection import Queries, QuerySelection, absent_note
from rubric.data.table import check_format
from rubric.errors import UserError
from rubric.evaluate.report import FORMATS, Rendered, Report, Score

#: The original tool's name of the row that pools every passage of the file (an upper bound).
OVERALL = "_overall_"


def cover(
    passages: GradedLike,
    *,
    k: int = 20,
    min_grade: int = 4,
    selection: GradeFilter = GradeFilter(),
    bank: list[TestBank] | str | Path | None = None,
    normalized: bool = False,
    source: str | None = None,
    complete: bool = False,
    queries: Queries = None,
    correct_answered: bool = False,
    overall: bool = False,
) -> Report:
    """Cover@k of every run in the passages file, as a :class:`Report` (mean over queries).

    ``passages`` is a graded passages file, ``rubric.grade``'s result or loaded queries, ``bank``
    a path or loaded banks; the defaults are the CLI's (k 20, an
    item is answered from grade 4, every kind of grade if the file holds one). ``queries``
    restricts the file and the bank to these query ids. A file is read one query at a time:
    memory holds one query's passages and the per-query scores.
    """
    chosen = QuerySelection.of(queries)
    with open_graded(passages, chosen, source, parameter="passages") as graded:
        source = graded.source
        notes = [absent_note(graded.absent(), source, "selected")]
        bank_source = "the bank"
        if bank is not None and not isinstance(bank, list):
            from rubric.data.jsonl import read_banks

            bank_source = str(bank)
            bank = read_banks(bank)
        kind = resolve_kind(graded.survey.kinds, selection, source)
        if kind.prompt_type == DIRECT:
            raise UserError(
                f"{source}: Cover needs question or nugget grades, {kind.prompt_class} grades passages "
                "directly"
            )
        in_file = [q for q in graded.survey.order.ids if q in chosen]
        bank_items: dict[str, set[str]] | None = None
        query_ids = in_file
        if bank is not None:
            bank = list(chosen.select(bank, lambda b: b.query_id))
            query_ids, bank_items, note = _bank_queries(bank, in_file, complete=complete)
            notes.append(absent_note(note[0], source, f"queries of {bank_source}; {note[1]}"))
            if not query_ids:
                raise UserError(f"{source}: none of its queries is in {bank_source}")
        evaluated = set(query_ids)
        # per run, per query: the score (queries a run does not rank are filled in below)
        per_run: dict[str, dict[str, float]] = defaultdict(dict)
        best: dict[str, float] = {}  # the `_overall_` row
        runs: set[str] = set()  # every run of the file, also those ranking no evaluated query
        for q in graded.queries():
            ranked, answered, items = _query_grades(q, kind, min_grade, correct_answered=correct_answered)
            runs.update(ranked)
            if q.query_id not in evaluated:
                continue
            if bank_items is not None:
                items = bank_items[q.query_id]
            pool = set().union(*answered.values()) if answered else set()
            denominator = (pool & items) if normalized else items
            for run, ranking in ranked.items():
                top = [pid for _, pid in sorted(ranking)[:k]]
                covered = set().union(*(answered.get(pid, set()) for pid in top)) & items
                per_run[run][q.query_id] = len(covered) / len(denominator) if denominator else 0.0
            best[q.query_id] = 1.0 if normalized else len(pool & items) / len(items) if items else 0.0
    if not runs:
        raise UserError(f"{source}: no passage has rankings; build the file with `rubric convert runs`")
    measure = f"{'ncover' if normalized else 'cover'}@{k}"
    # a run that ranks no passage of an evaluated query scores 0 there
    scores = [_mean(run, measure, per_run.get(run, {}), query_ids, 0.0) for run in sorted(runs)]
    if overall:
        scores.append(_mean(OVERALL, measure, best, query_ids, 1.0 if normalized else 0.0))
    return Report(scores, title=measure, notes=[n for n in notes if n])


def _bank_queries(
    bank: list[TestBank], in_file: list[str], *, complete: bool
) -> tuple[list[str], dict[str, set[str]], tuple[list[str], str]]:
    """The queries Cover evaluates with a bank (the bank's, less those the file lacks unless
    ``complete``), the bank's items per query, and the lacking queries with what became of them."""
    bank_items: dict[str, set[str]] = defaultdict(set)
    for b in bank:
        bank_items[b.query_id].update(i.item_id for i in b.items)
    bank_queries = list(dict.fromkeys(b.query_id for b in bank))
    lacking = [q for q in bank_queries if q not in set(in_file)]
    query_ids = bank_queries if complete else [q for q in bank_queries if q not in lacking]
    what = "each counts 0 (-c)" if complete else "left out; -c counts them as 0"
    return query_ids, bank_items, (lacking, what)


def _mean(run: str, measure: str, found: dict[str, float], query_ids: list[str], missing: float) -> Score:
    """``run``'s score: its mean over ``query_ids``, ``missing`` where it has no value."""
    per_query = {qid: found.get(qid, missing) for qid in query_ids}
    value = sum(per_query.values()) / len(per_query) if per_query else 0.0
    return Score(run=run, measure=measure, value=value, per_query=per_query)


def cover_output(
    passages: str | Path,
    *,
    fmt: str = "tsv",
    per_query: bool = False,
    k: int = 20,
    min_grade: int = 4,
    selection: GradeFilter = GradeFilter(),
    bank: str | Path | None = None,
    normalized: bool = False,
    complete: bool = False,
    queries: Queries = None,
    correct_answered: bool = False,
    overall: bool = False,
) -> Rendered:
    """``rubric evaluate cover``: :func:`cover` rendered in ``fmt`` (one of
    :data:`~rubric.evaluate.report.FORMATS`; ``per_query``: TSV per query, as leaderboard -q),
    with its notes for stderr. The format and ``--prompt-type`` (question or nugget: Cover counts
    answered items) are checked before any file is read."""
    check_format(fmt, FORMATS)
    selection.check(ITEM_TYPES)
    report = cover(
        passages,
        k=k,
        min_grade=min_grade,
        selection=selection,
        bank=bank,
        normalized=normalized,
        source=None,
        complete=complete,
        queries=queries,
        correct_answered=correct_answered,
        overall=overall,
    )
    return Rendered(report.render(fmt, per_query=per_query), report.notes)


def _query_grades(
    q: QueryRecord, kind: GradeKind, min_grade: int, *, correct_answered: bool
) -> tuple[dict[str, list[tuple[int, str]]], dict[str, set[str]], set[str]]:
    """One query's rankings per run ``[(rank, passage)]``, the items each passage answers, and
    the items found in its grades."""
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    answered: dict[str, set[str]] = {}
    items: set[str] = set()
    for p in q.passages:
        for method, query_id, rank in p.rankings:
            if query_id == q.query_id:
                ranked[method].append((rank, p.paragraph_id))
        for g in p.exam_grades:
            if g.kind == kind:
                if correct_answered:
                    items.update([*g.correct, *g.wrong])
                    answered[p.paragraph_id] = set(g.correct)
                else:
                    items.update(g.grades)
                    answered[p.paragraph_id] = {i for i, v in g.grades.items() if v >= min_grade}
                break
    return ranked, answered, items
