"""RR@k, Judged@k, ERR@k (computed here) and ir_measures' per-measure options, by hand on the tiny qrels."""

from __future__ import annotations

import pytest

from rubric.data.trec import read_qrels
from rubric.evaluate.leaderboards import leaderboard
from rubric.evaluate.ranked_measures import err_max_grade, expected_reciprocal_rank


@pytest.fixture
def qrels(tiny):
    return read_qrels(tiny / "qrels.txt")  # q1: d1 2, d2 3, d3 1, d4 0


# q1 ranked as trec_eval ranks it: d4 (grade 0), d9 (unjudged), d1 (grade 2)
RUN = {"c": {"q1": {"d4": 3.0, "d9": 2.0, "d1": 1.0}}}


def value(qrels, measure, run=RUN, **options):
    return leaderboard(qrels, run, [measure], **options).get("c", measure).value


def test_reciprocal_rank_with_a_cutoff(qrels):
    assert value(qrels, "RR(rel=2)@2") == 0.0
    assert value(qrels, "RR(rel=2)@3") == pytest.approx(1 / 3)
    assert value(qrels, "RR@10", level=3) == 0.0  # -l applies where rel= is not given
    assert value(qrels, "MRR@10") == pytest.approx(1 / 3)
    assert value(qrels, "RR(rel=2)@3", judged_only=True) == 0.5  # -J drops d9
    assert value(qrels, "RR(rel=2,judged_only=True)@3") == 0.5
    # equal scores rank by docid descending, as trec_eval does: d4 (grade 0) before d1
    tie = {"c": {"q1": {"d1": 1.0, "d4": 1.0}}}
    assert value(qrels, "RR@1", tie) == 0.0 and value(qrels, "RR@2", tie) == 0.5
    # without a cutoff RR is trec_eval's recip_rank
    assert value(qrels, "RR@1000") == value(qrels, "RR") == pytest.approx(1 / 3)


def test_judged_share(qrels):
    assert value(qrels, "Judged@1") == 1.0
    assert value(qrels, "Judged@2") == 0.5
    assert value(qrels, "Judged@10") == pytest.approx(2 / 3)  # a shorter run: divided by its length
    assert value(qrels, "Judged") == pytest.approx(2 / 3)


def test_expected_reciprocal_rank(qrels):
    # gdeval.pl: R = (2^g - 1) / 2^4; only d1 (g 2, rank 3) counts: 3/16 / 3
    assert value(qrels, "ERR@3") == pytest.approx(3 / 16 / 3)
    assert value(qrels, "ERR@2") == 0.0
    run = {"c": {"q1": {"d2": 3.0, "d1": 2.0}}}  # g 3 then g 2
    r1, r2 = 7 / 16, 3 / 16
    assert value(qrels, "ERR@10", run) == pytest.approx(r1 + (1 - r1) * r2 / 2)
    assert value(qrels, "ERR@10", run, level=3) == value(qrels, "ERR@10", run)  # -l does not change it
    # grades above gdeval's 4 (Rubric-Qrels 0-5) raise the maximum grade
    assert err_max_grade({"q": {"d": 5}}) == 5 and err_max_grade({"q": {"d": 2}}) == 4
    assert expected_reciprocal_rank(["d"], {"d": 5}, 10, 5) == pytest.approx(31 / 32)


def test_queries_follow_trec_eval(qrels):
    run = {"c": {"q1": {"d1": 1.0}, "q2": {"d6": 1.0}}}
    report = leaderboard(qrels, run, ["Judged@5", "ERR@5"])
    assert report.get("c", "Judged@5").n_queries == 2  # the queries the run has
    complete = leaderboard(qrels, run, ["Judged@5"], complete=True)
    assert complete.get("c", "Judged@5").n_queries == 3  # -c: every qrels query, q3 counts 0
    assert complete.get("c", "Judged@5").value == pytest.approx(2 / 3)


def test_per_measure_judged_only_and_gains_go_to_trec_eval(qrels):
    assert value(qrels, "P(judged_only=True)@2") == value(qrels, "P@2", judged_only=True) == 0.5
    assert value(qrels, "P@2") == 0.0
    # ir_measures' gains={3:1} maps the qrels first; trec_eval's own ndcg.3=1 sets the same gains
    assert value(qrels, "nDCG(gains={3:1})") == pytest.approx(value(qrels, "ndcg.3=1"))
    assert value(qrels, "nDCG(gains={3:1})") != pytest.approx(value(qrels, "nDCG"))
