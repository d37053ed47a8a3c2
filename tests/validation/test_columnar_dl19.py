"""The columnar engine on the 37 TREC DL 2019 passage runs and the NIST qrels: every measure it
computes equals trec_eval's own C code (pytrec_eval) on every (run, query), at -l 1 and -l 2,
with and without -J and -M 100."""

from __future__ import annotations

import pytest
from pytrec_eval import _RelevanceEvaluator

from rubric.data.run_columns import read_run_columns
from rubric.data.trec import expand_paths, ranked, read_qrels
from rubric.evaluate.columnar import computes
from rubric.evaluate.measures import parse_measures
from rubric.evaluate.treceval import Evaluator, TrecEvalSettings

MEASURES = [
    "map", "P.5,10,100", "recall.10,100,1000", "ndcg_cut.5,10,100", "ndcg", "recip_rank", "Rprec", "bpref",
    "success.1,10", "num_ret", "num_rel", "num_rel_ret",
]  # fmt: skip


@pytest.mark.parametrize(
    "s",
    [
        TrecEvalSettings(),
        TrecEvalSettings(level=2),
        TrecEvalSettings(level=2, judged_only=True, max_docs=100),
    ],
    ids=["l1", "l2", "l2-J-M100"],
)
def test_every_engine_measure_equals_trec_eval_on_the_dl19_runs(shared, s):
    qrels = read_qrels(shared("anserini-tools", "qrels.dl19-passage.txt"))
    measures = parse_measures(MEASURES)
    assert all(computes(m) for m in measures)
    ours = Evaluator(qrels, measures, s)
    reference = _RelevanceEvaluator(
        query_relevance=qrels,
        measures=set(MEASURES),
        relevance_level=s.level,
        judged_docs_only_flag=s.judged_only,
    )
    compared = 0
    for path in expand_paths([shared("naghmefarzi-llmjudge", "dl19-runs")]):
        run = read_run_columns(path, queries=frozenset(qrels))
        got = ours.evaluate(run)
        scores = run.to_scores()
        if s.max_docs is not None:
            scores = {q: dict(ranked(d)[: s.max_docs]) for q, d in scores.items()}
        expected = reference.evaluate(scores)
        for m in measures:
            assert got.values[m] == {q: expected[q][m.key] for q in got.queries}, (run.name, m.name)
            compared += len(got.queries)
    assert compared >= 37 * 43 * len(measures)
