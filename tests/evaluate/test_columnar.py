"""The columnar engine against trec_eval's own code (pytrec_eval) and the reference measures:
equal values, not close ones, on generated qrels and runs with ties, float32 rounding, empty
queries, negative grades, -l, -J, -M and -c."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytrec_eval import _RelevanceEvaluator

from rubric.data.run_columns import RunColumns
from rubric.data.trec import ranked
from rubric.evaluate.columnar import computes
from rubric.evaluate.measures import parse_measures
from rubric.evaluate.ranked_measures import evaluate_ranked
from rubric.evaluate.treceval import Evaluator, TrecEvalSettings, judgeable

TREC_EVAL = [
    "map", "P.1,3,5,20", "recall.2,5,20", "ndcg_cut.1,3,10", "ndcg", "recip_rank", "Rprec", "bpref",
    "success.1,5", "num_ret", "num_rel", "num_rel_ret",
]  # fmt: skip
OURS = ["RR@3", "RR(rel=2)@10", "Judged@5", "ERR@10", "RR(rel=2,judged_only=True)@5"]

# ids of 8 bytes and fewer are matched as 64-bit words, longer ones as strings
DOCS = ["d0", "d1", "d2", "d10", "d3", "a", "b#1", "zz", "D2", "d22", "d1234567", "doc-123456789"]
# near-equal doubles that are one float32 (0.1 and 0.1 + 1e-9), -0.0 and 0.0, exact ties
SCORES = [0.1, 0.1 + 1e-9, 0.30000001, 0.3, 1.0, 1.0 + 1e-8, -0.0, 0.0, -2.5, 7.0, 1e-7, 3.4e38]

qrels_st = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q10"]),
    st.dictionaries(st.sampled_from(DOCS), st.integers(-2, 4), min_size=0, max_size=8),
    min_size=1,
    max_size=4,
).filter(lambda q: any(q.values()) and all(max(d.values()) >= -1 for d in q.values() if d))
# (trec_eval 9.0.8 itself crashes on a query whose grades are all below -1: it sizes an array by
# the highest grade plus one; the engine has no such limit, pytrec_eval, the reference, has it)
run_st = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q10", "q4"]),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from(SCORES), min_size=0, max_size=10),
    max_size=5,
)
settings_st = st.builds(
    TrecEvalSettings,
    level=st.integers(1, 3),
    complete=st.booleans(),
    judged_only=st.booleans(),
    max_docs=st.one_of(st.none(), st.integers(1, 6)),
)


def _reference_trec_eval(qrels, run, measure_names, s: TrecEvalSettings):
    """pytrec_eval on the run cut as trec_eval -M cuts it, over the queries trec_eval counts."""
    judged = {q: d for q, d in qrels.items() if d}
    scores = RunColumns.from_scores("r", run).to_scores()
    if s.max_docs is not None:
        scores = {q: dict(ranked(d)[: s.max_docs]) for q, d in scores.items()}
    queries = sorted(judged) if s.complete else sorted(q for q in judged if scores.get(q))
    requests = set(measure_names)
    evaluator = _RelevanceEvaluator(
        query_relevance=judgeable(judged),
        measures=requests,
        relevance_level=s.level,
        judged_docs_only_flag=s.judged_only,
    )
    return queries, evaluator.evaluate({q: scores.get(q, {}) for q in queries})


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st, s=settings_st)
def test_every_trec_eval_measure_equals_pytrec_eval(qrels, run, s):
    measures = parse_measures(TREC_EVAL)
    assert all(computes(m) for m in measures)
    got = Evaluator(qrels, measures, s).evaluate(run)
    queries, expected = _reference_trec_eval(qrels, run, TREC_EVAL, s)
    assert got.queries == queries
    for m in measures:
        for q in queries:
            assert got.values[m][q] == expected[q][m.key], (m.name, q)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st, s=settings_st)
def test_rr_judged_err_equal_the_reference_definitions(qrels, run, s):
    measures = parse_measures(OURS)
    got = Evaluator(qrels, measures, s).evaluate(run)
    judged = {q: d for q, d in qrels.items() if d}
    scores = RunColumns.from_scores("r", run).to_scores()
    if s.max_docs is not None:
        scores = {q: dict(ranked(d)[: s.max_docs]) for q, d in scores.items()}
    expected = evaluate_ranked(
        measures, judged, scores, queries=got.queries, level=s.level, judged_only=s.judged_only
    )
    for m in measures:
        assert got.values[m] == expected[m], m.name


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st, s=settings_st)
def test_a_level_or_judged_only_of_the_measure_s_own_is_trec_eval_s_with_that_flag(qrels, run, s):
    own = parse_measures(["nDCG(judged_only=True)@10", "P(rel=2)@5", "AP(rel=3)", "Bpref(rel=2)"])
    got = Evaluator(qrels, own, s).evaluate(run)
    for m, flag in zip(
        own, [(s.level, True), (2, s.judged_only), (3, s.judged_only), (2, s.judged_only)], strict=True
    ):
        lvl, judged = flag
        _, expected = _reference_trec_eval(
            qrels, run, [m.request], TrecEvalSettings(lvl, s.complete, judged, s.max_docs)
        )
        assert got.values[m] == {q: expected[q][m.key] for q in got.queries}, m.label


@pytest.mark.parametrize(
    ("name", "value"),
    [("ndcg_cut_3", 0.0), ("P_3", 0.0), ("map", 0.0), ("bpref", 0.0), ("num_ret", 0.0)],
)
def test_a_query_whose_documents_are_all_unjudged_scores_zero_under_minus_j(name, value):
    qrels = {"q1": {"d1": 2, "d2": -1}}
    run = {"q1": {"x": 3.0, "d2": 2.0}}
    got = Evaluator(qrels, parse_measures([name]), TrecEvalSettings(judged_only=True)).evaluate(run)
    assert next(iter(got.values.values()))["q1"] == value


def test_measures_outside_the_engine_still_go_to_trec_eval():
    measures = parse_measures(["infAP", "ndcg.1=3,2=5", "nDCG(gains={1:1,2:4})@10", "iprec_at_recall.0.5"])
    assert not any(computes(m) for m in measures)
    qrels = {"q1": {"d1": 1, "d2": 2, "d3": 0}}
    run = {"q1": {"d1": 1.0, "d2": 0.5, "d3": 2.0}}
    got = Evaluator(qrels, measures).evaluate(run)
    assert all(0 <= got.values[m]["q1"] <= 1 for m in measures)
    assert got.values[measures[0]]["q1"] > 0
