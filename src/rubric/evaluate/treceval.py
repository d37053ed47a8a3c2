"""trec_eval 9.0.8 semantics: per-query values, ``-c``, ``all`` and printing.

The measures campaigns use at scale are computed on whole runs as arrays
(:mod:`rubric.evaluate.columnar`), the others by trec_eval's own code through pytrec_eval; what
trec_eval does around them is redone here, exactly: ``-c`` (every qrels query counts, a query
the run misses is evaluated with an empty ranking), the ``all`` line (sum for counts, geometric
mean for ``gm_*`` with trec_eval's floor of 1e-5, otherwise the mean summed in query order), and
the output format
(``%-22s\\t%s\\t%.4f``, integers for counts, per-query lines without num_q/gm_*/runid).

An :class:`Evaluator` is built once per qrels and evaluates many runs: trec_eval's qrels
parsing is the expensive part, and a leaderboard or a correlation sweep reuses it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from rubric.data.run_columns import RunColumns
from rubric.data.trec import MAX_GRADE, Qrels, RunScores, ranked
from rubric.errors import UserError
from rubric.evaluate.alpha_ndcg import ItemQrels, alpha_ndcg
from rubric.evaluate.columnar import QrelsColumns, computes, evaluate_columns
from rubric.evaluate.measures import Measure
from rubric.evaluate.zscores import ZScores, zscore

GM_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN
_NUMERIC_PARAMS = re.compile(r"^[0-9.]+(,[0-9.]+)*$")


@dataclass
class QueryValues:
    """Per-query values of one run for several measures, and the queries evaluated."""

    run: str
    queries: list[str]
    retrieved: set[str] = field(default_factory=set)
    values: dict[Measure, dict[str, float]] = field(default_factory=dict)
    unranked: list[str] = field(default_factory=list)  # qrels queries the run has no ranking for
    zscored: bool = False  # trec_eval -Z: values are z-scores (gm_* ones of the values' logs)
    #: trec_eval's ``relstring`` lines: (printed name, {query: relevance string}); per query only
    relstrings: tuple[str, dict[str, str]] | None = None
    #: the ``num_rel`` that trec_eval 9.0.8 prints on the ``all`` line under ``-c``: every qrels
    #: line with a relevance above 0, whatever ``-l`` says (its calc_avg recounts the qrels)
    complete_num_rel: int | None = None

    def summary(self, measure: Measure) -> float:
        """The ``all`` value trec_eval prints."""
        values = [self.values[measure][q] for q in self.queries]
        if self.zscored and measure.aggregate == "gmean":  # z-scores of logs: no floor, no log
            return math.exp(sum(values) / len(values)) if values else 0.0
        return aggregate(measure, values)


def aggregate(measure: Measure, values: list[float]) -> float:
    """Combine per-query values as trec_eval does (per-query ``gm_*`` values are the plain ones)."""
    if not values:
        return 0.0
    if measure.aggregate == "sum":
        return float(sum(values))
    if measure.aggregate == "gmean":
        total = 0.0
        for v in values:
            total += math.log(max(v, GM_FLOOR))
        return math.exp(total / len(values))
    total = 0.0
    for v in values:  # in query order, like trec_eval's accumulation
        total += v
    return total / len(values)


#: A document no run file can rank (their columns are split at whitespace): see :func:`judgeable`.
UNRANKABLE = " "


def judgeable(qrels: Qrels) -> Qrels:
    """The qrels as trec_eval's measure code can take them: a query whose judgments are all
    negative gets one more, a 0 for :data:`UNRANKABLE`.

    trec_eval 9.0.8 reads a negative grade as "in the pool, not judged" (``form_res_rels.c``:
    not relevant, left out of ``num_rel`` and of bpref's judged non-relevant count, dropped by
    ``-J``). But it sizes its per-grade counts by the query's highest grade plus one: with no
    grade >= 0 that size is 0 or negative, ``te_chk_and_malloc`` hands back the previous query's
    (freed or NULL) buffer, ``memset`` gets a negative length (a segmentation fault for -2 and
    lower), and the measures read a stale count of grades. One judged-non-relevant document that
    no run ranks gives the query a buffer and changes no value: it is not retrieved, not
    relevant, and its grade's gain is 0 (bpref is 0 with nothing relevant either way).
    A grade above :data:`~rubric.data.trec.MAX_GRADE` is an error (trec_eval would allocate and
    scan a counter for every grade below it, per query).
    """
    for q, docs in qrels.items():
        top = max(docs.values(), default=0)
        if top > MAX_GRADE:
            doc = next(d for d, rel in docs.items() if rel == top)
            raise UserError(
                f"qrels: query {q} document {doc}: grade {top} is above {MAX_GRADE} (trec_eval keeps a "
                "counter for every grade up to the highest)"
            )
    if all(any(rel >= 0 for rel in docs.values()) for docs in qrels.values()):
        return qrels
    return {
        q: docs if any(rel >= 0 for rel in docs.values()) else {**docs, UNRANKABLE: 0}
        for q, docs in qrels.items()
    }


@dataclass(frozen=True)
class TrecEvalSettings:
    """trec_eval's options that change the values, shared by every evaluator and the API.

    ``level`` is ``-l`` (level_for_rel), ``complete`` is ``-c``, ``judged_only`` is ``-J``,
    ``max_docs`` is ``-M`` (each ranking cut to its first documents, in trec_eval's order),
    ``num_docs`` is ``-N`` (documents in the collection: only ``utility``'s fourth coefficient,
    the worth of a non-relevant document left unretrieved, uses it; trec_eval's default is 0),
    ``zscores`` is ``-Z`` (:mod:`rubric.evaluate.zscores`; not with ``complete``).
    """

    level: int = 1
    complete: bool = False
    judged_only: bool = False
    max_docs: int | None = None
    num_docs: int | None = None
    zscores: ZScores | None = None

    def __post_init__(self) -> None:
        if self.max_docs is not None and self.max_docs < 1:
            raise UserError(f"max_docs: {self.max_docs} is not a number of documents (trec_eval -M: >= 1)")
        if self.num_docs is not None and self.num_docs < 0:
            raise UserError(f"num_docs: {self.num_docs} is not a number of documents (trec_eval -N: >= 0)")
        if self.zscores is not None and self.complete:
            raise UserError("zscores: not with complete (trec_eval -Z with -c mixes z-scores and raw values)")
        level = self.level
        if isinstance(level, bool) or not isinstance(level, int) or level < 1:
            raise UserError(f"level: {level!r} is not a relevance level (trec_eval -l: a whole number >= 1)")


_Group = tuple[tuple, dict[str, list[str] | None], list[Measure]]  # (level, -J, gains), base -> params


def _request_groups(measures: list[Measure], *, level: int, judged_only: bool) -> list[_Group]:
    """The measures pytrec_eval computes, grouped as trec_eval takes them: one parameter list per
    measure (P.5 and P.10 are asked as P.10,5, as pytrec_eval's wrapper does); a base asked twice
    otherwise (ndcg and ndcg.1=3) goes to a second evaluator, and so do measures with a level,
    ``-J`` or gains of their own."""
    groups: list[_Group] = []
    for m in measures:
        setting = (
            level if m.level is None else m.level,
            judged_only if m.judged_only is None else m.judged_only,
            m.gains,
        )
        base, _, params = m.request.partition(".")
        numeric = _NUMERIC_PARAMS.match(params) if params else None
        for g_setting, bases, members in groups:
            if g_setting != setting:
                continue
            if base not in bases:
                bases[base] = params.split(",") if numeric else None
            elif numeric and bases[base] is not None:
                bases[base] += [p for p in params.split(",") if p not in bases[base]]
            elif not (params == "" and bases[base] is None and m.request == base):
                continue
            members.append(m)
            break
        else:
            groups.append((setting, {base: params.split(",") if numeric else None}, [m]))
    return groups


def _trec_eval_evaluators(qrels: Qrels, groups: list[_Group]) -> list[tuple[object, list[Measure]]]:
    """One pytrec_eval evaluator per group (trec_eval parses the qrels for each)."""
    from pytrec_eval import _RelevanceEvaluator

    out = []
    for (lvl, judged, gains), bases, members in groups:
        requests = {m.request for m in members if bases.get(m.request.partition(".")[0]) is None}
        requests |= {f"{b}.{','.join(ps)}" for b, ps in bases.items() if ps is not None}
        qrels_here = qrels
        if gains is not None:  # ir_measures' nDCG(gains={grade: gain}): the qrels mapped first
            gain = dict(gains)
            qrels_here = {q: {d: gain.get(r, r) for d, r in ds.items()} for q, ds in qrels.items()}
        evaluator = _RelevanceEvaluator(
            query_relevance=judgeable(qrels_here),
            measures=requests,
            relevance_level=lvl,
            judged_docs_only_flag=judged,
        )
        out.append((evaluator, members))
    return out


class Evaluator:
    """trec_eval for one qrels file, many runs.

    ``settings`` are trec_eval's options (:class:`TrecEvalSettings`). The measures campaigns use
    at scale are computed on the run's columns (:mod:`rubric.evaluate.columnar`), the rest by
    trec_eval's own code through pytrec_eval, alpha-nDCG by :mod:`rubric.evaluate.alpha_ndcg`.
    Measures with a ``rel=`` level of their own get an evaluator for that level.
    """

    def __init__(
        self,
        qrels: Qrels,
        measures: list[Measure],
        settings: TrecEvalSettings | None = None,
        *,
        items: ItemQrels | None = None,
        relstring: tuple[str, int] | None = None,
    ) -> None:
        self.settings = settings or TrecEvalSettings()
        self.relstring = relstring  # (printed name, length): trec_eval's relstring lines
        self.qrels = {q: docs for q, docs in qrels.items() if docs}
        self.measures = measures
        self.items = items
        if items is None and any(m.needs_items for m in measures):
            raise UserError(
                "{measures}: alpha_nDCG needs per-item qrels (`rubric evaluate qrels --per-item`)", "measures"
            )
        judgeable(self.qrels)  # a grade trec_eval cannot take is an error here too
        self._columnar = [m for m in measures if computes(m)]
        self._qrels_columns = QrelsColumns.of(self.qrels) if self._columnar else None
        by_trec_eval = [m for m in measures if m.by_trec_eval and not computes(m)]
        groups = _request_groups(
            by_trec_eval, level=self.settings.level, judged_only=self.settings.judged_only
        )
        self._groups = _trec_eval_evaluators(self.qrels, groups)

    def queries_for(self, run: RunScores | RunColumns) -> list[str]:
        """The queries trec_eval averages over, in its order (sorted by query id)."""
        if self.settings.complete:
            return sorted(self.qrels)
        ranked = set(run.queries) if isinstance(run, RunColumns) else {q for q, docs in run.items() if docs}
        return sorted(q for q in self.qrels if q in ranked)

    def evaluate(self, run: RunScores | RunColumns, name: str | None = None) -> QueryValues:
        """Per-query values of ``run`` for every measure (only the queries trec_eval counts);
        with ``max_docs`` each ranking is first cut to its first documents (trec_eval -M)."""
        columns = run if isinstance(run, RunColumns) else RunColumns.from_scores(name or "run", run)
        queries = self.queries_for(columns)
        ranked = set(columns.queries)
        result = QueryValues(
            run=name or columns.name,
            queries=queries,
            retrieved={q for q in queries if q in ranked},
            unranked=sorted(q for q in self.qrels if q not in ranked),
        )
        settings = self.settings
        if self.relstring is not None:
            printed, length = self.relstring
            cut = columns.cut(settings.max_docs).to_scores()
            strings = {q: relstring(self.qrels[q], cut.get(q) or {}, length) for q in result.retrieved}
            result.relstrings = (printed, strings)
        if settings.complete:
            result.complete_num_rel = sum(1 for docs in self.qrels.values() for r in docs.values() if r > 0)
        if self._qrels_columns is not None:
            result.values.update(
                evaluate_columns(
                    self._qrels_columns,
                    self._columnar,
                    columns,
                    queries,
                    level=settings.level,
                    judged_only=settings.judged_only,
                    max_docs=settings.max_docs,
                )
            )
        if self._groups or any(m.needs_items for m in self.measures):
            scores = columns.cut(settings.max_docs).to_scores()
            self._by_dicts(result, {q: scores.get(q) or {} for q in queries})
        result.values = {m: result.values[m] for m in self.measures}  # the order asked for
        for m in (m for m in self.measures if m.request.partition(".")[0] == "utility"):
            self._utility(m, result)
        if settings.zscores is not None:
            self._to_zscores(result)
        return result

    def _by_dicts(self, result: QueryValues, scores: dict[str, dict[str, float]]) -> None:
        """The measures of trec_eval's long tail (pytrec_eval) and alpha-nDCG, on the run as dicts."""
        queries = result.queries
        for evaluator, members in self._groups:
            per_query = evaluator.evaluate(scores) if scores else {}  # type: ignore[attr-defined]
            for m in members:
                column = {}
                for q in queries:
                    v = per_query[q][m.key]
                    if v != v:  # pytrec_eval's NaN for an empty ranking (iprec_at_recall_0.00)
                        v = 0.0
                    column[q] = math.exp(v) if m.aggregate == "gmean" else v
                result.values[m] = column
        for m in (m for m in self.measures if m.needs_items):
            assert self.items is not None and m.alpha is not None
            lvl = self.settings.level if m.level is None else m.level
            result.values[m] = alpha_ndcg(self.items, scores, queries, k=m.cutoff, alpha=m.alpha, level=lvl)

    def _utility(self, measure: Measure, result: QueryValues) -> None:
        """trec_eval's utility where pytrec_eval's differs: the ``-N`` documents of the collection
        in the fourth coefficient's term (pytrec_eval counts 0), and 0 for a query ``-c`` adds
        (trec_eval never evaluates it; an empty ranking would score the third and fourth terms)."""
        _, _, params = measure.request.partition(".")
        fourth = float(params.split(",")[3]) if params else 0.0
        column = result.values[measure]
        for q in result.queries:
            if q not in result.retrieved:
                column[q] = 0.0
            elif self.settings.num_docs:
                column[q] += fourth * self.settings.num_docs

    def _to_zscores(self, result: QueryValues) -> None:
        """trec_eval -Z: every per-query value as a z-score (``gm_*``: of the value's log, as
        trec_eval keeps it); ``num_q`` counts queries and stays."""
        zscores = self.settings.zscores
        assert zscores is not None
        result.zscored = True
        for m, column in result.values.items():
            if m.key == "num_q":
                continue
            for q, v in column.items():
                raw = math.log(max(v, GM_FLOOR)) if m.aggregate == "gmean" else v
                column[q] = zscore(raw, zscores.get((q, m.name)))


# --- printing as trec_eval ---------------------------------------------------------------------


def relstring(judged: Mapping[str, int], scores: Mapping[str, float], length: int) -> str:
    """trec_eval's ``relstring``: one character per document of the first ``length`` ranked, its
    relevance 0-9, ``>`` above 9, ``-`` not in the qrels, ``.`` in the qrels with a negative
    relevance (trec_eval's "in the pool, unjudged")."""
    chars = []
    for doc, _ in ranked(dict(scores))[: max(length, 0)]:
        rel = judged.get(doc)
        chars.append("-" if rel is None else "." if rel < 0 else ">" if rel > 9 else str(rel))
    return "".join(chars)


def format_value(measure: Measure, value: float, *, zscored: bool = False) -> str:
    """As trec_eval prints it: ``%ld`` for counts, ``%6.4f`` otherwise (and for every z-score)."""
    return str(int(round(value))) if measure.is_count and not zscored else f"{value:6.4f}"


def trec_eval_lines(result: QueryValues, *, per_query: bool = False, runid: bool = True) -> list[str]:
    """The lines trec_eval 9.0.8 prints for these measures (``-q`` adds per-query lines).

    ``runid`` prints the run tag line, as trec_eval does when ``runid`` is among the measures
    (its default ``official`` set and ``all_trec`` include it); z-scores (``-Z``) are printed
    under the measure's name with a ``Z`` in front.
    """
    lines = []
    z = "Z" if result.zscored else ""
    if per_query:  # trec_eval 9.0.8 prints no lines for the queries that -c adds
        measures: list[Measure | None] = [*result.values, None]
        at = _relstring_place(list(result.values)) if result.relstrings else -1
        for q in (q for q in result.queries if q in result.retrieved):
            for i, m in enumerate(measures):
                if i == at and result.relstrings is not None:
                    name, strings = result.relstrings
                    lines.append(f"{name:<22}\t{q}\t'{strings[q]}'")
                if m is None or m.key == "num_q" or m.aggregate == "gmean":
                    continue
                value = format_value(m, result.values[m][q], zscored=result.zscored)
                lines.append(f"{z}{m.name:<22}\t{q}\t{value}")
    if runid:
        lines.append(f"{'runid':<22}\tall\t{result.run}")
    for m in result.values:
        if m.key == "num_rel" and result.complete_num_rel is not None and not result.zscored:
            value = float(result.complete_num_rel)
        else:
            value = float(len(result.queries)) if m.key == "num_q" else result.summary(m)
        lines.append(f"{z}{m.name:<22}\tall\t{format_value(m, value, zscored=result.zscored)}")
    return lines


def _relstring_place(measures: list[Measure]) -> int:
    """Where trec_eval prints ``relstring`` among ``measures``: its table puts it after ``P``
    and before ``recall``, whatever order ``-m`` names them in."""
    from rubric.evaluate.measures import TREC_EVAL_ORDER

    order = {name: i for i, name in enumerate(TREC_EVAL_ORDER)}
    own = order["relstring"]
    for i, m in enumerate(measures):
        if order.get(m.request.partition(".")[0], -1) > own:
            return i
    return len(measures)
