"""trec_eval semantics on the tiny fixture, checked against values worked out by hand."""

from __future__ import annotations

import json
import math

import pytest

from rubric.data.trec import read_qrels
from rubric.evaluate.leaderboards import evaluate_runs, leaderboard
from rubric.evaluate.treceval import trec_eval_lines


@pytest.fixture
def qrels(tiny):
    return read_qrels(tiny / "qrels.txt")


def test_values_by_hand_and_complete_flag(tiny, qrels):
    runs = {"a": {"q1": {"d2": 3.0, "d9": 2.0, "d1": 1.0}}, "b": {"q1": {"d4": 2.0}, "q2": {"d5": 1.0}}}
    report = leaderboard(qrels, runs, ["P@2", "RR(rel=3)", "AP"])
    # a on q1: d2 (rel 3), d9 (unjudged), d1 (rel 2); relevant: d1 d2 d3 -> AP = (1 + 2/3) / 3
    assert report.get("a", "AP").value == pytest.approx((1 + 2 / 3) / 3)
    assert report.get("a", "P@2").value == 0.5
    assert report.get("b", "RR(rel=3)").value == pytest.approx(0.5)  # q1: 0, q2: 1
    assert report.get("b", "P@2").n_queries == 2
    complete = leaderboard(qrels, runs, ["AP"], complete=True)
    assert complete.get("a", "AP").n_queries == 3  # q2 and q3 count 0
    assert complete.get("a", "AP").value == pytest.approx((1 + 2 / 3) / 9)


def test_level_changes_binary_measures_not_ndcg(qrels):
    runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0}}}
    l1 = leaderboard(qrels, runs, ["P.2", "ndcg_cut.2"], level=1)
    l3 = leaderboard(qrels, runs, ["P.2", "ndcg_cut.2"], level=3)
    assert (l1.get("a", "P.2").value, l3.get("a", "P.2").value) == (1.0, 0.5)
    assert l1.get("a", "ndcg_cut.2").value == l3.get("a", "ndcg_cut.2").value


def test_ties_break_by_docid_descending(qrels):
    # equal scores: trec_eval ranks d4 (nonrel) before d1 (rel): docid descending
    runs = {"a": {"q1": {"d1": 1.0, "d4": 1.0}}}
    assert leaderboard(qrels, runs, ["RR"]).get("a", "RR").value == 0.5


def test_report_order_stderr_and_formats(qrels):
    runs = {"low": {"q1": {"d4": 1.0}, "q2": {"d7": 1.0}}, "high": {"q1": {"d2": 1.0}, "q2": {"d5": 1.0}}}
    report = leaderboard(qrels, runs, ["P@1", "NumRet"])
    assert report.runs == ["high", "low"] and report.measures == ["P@1", "NumRet"]
    s = report.get("high", "P@1")
    assert (s.value, s.stderr, s.n_queries) == (1.0, 0.0, 2)
    assert report.get("low", "NumRet").value == 2.0 and math.isnan(report.get("low", "NumRet").stderr)
    tsv = report.to_tsv().splitlines()
    assert tsv[0] == "run\tmeasure\tvalue\tstderr\tn_queries"
    assert tsv[1] == "high\tP@1\t1.0000\t0.0000\t2"
    assert json.loads(report.to_json())[0] == {"run": "high", "measure": "P@1", "value": 1.0, "stderr": 0.0,
                                               "n_queries": 2}  # fmt: skip
    latex = report.to_latex()
    assert "\\textbf{1.000}" in latex and "P@1" in latex
    assert "high\tP@1\tq2\t1.0000" in report.to_tsv(per_query=True)


def test_trec_eval_lines_format(tiny, qrels):
    (res,) = evaluate_runs(qrels, [tiny / "run.alpha"], ["map", "num_ret"])
    lines = trec_eval_lines(res, per_query=True)
    assert "num_ret               \tq1\t3" in lines
    assert lines[-3:] == ["runid                 \tall\talpha", "map                   \tall\t0.5185",
                          "num_ret               \tall\t8"]  # fmt: skip


def test_python_api_from_package(tiny):
    import rubric.evaluate as ev

    report = ev.leaderboard(tiny / "qrels.txt", [tiny / "run.alpha", tiny / "run.beta"], ["map"])
    assert isinstance(report, ev.Report)
    assert report.values("map") == pytest.approx({"alpha": 0.5185185, "beta": 0.5833333})


@pytest.mark.parametrize("level", [0, -1, 1.5, True])
def test_a_level_that_is_not_a_relevance_level_is_refused_by_name(level):
    """From Python as from the CLI (``-l``, min 1): one clear error, not pytrec_eval's TypeError."""
    from rubric.errors import UserError
    from rubric.evaluate.measures import parse_measures
    from rubric.evaluate.treceval import Evaluator, TrecEvalSettings

    with pytest.raises(UserError, match="not a relevance level"):
        Evaluator({"q1": {"d1": 1}}, parse_measures(["P@5"]), TrecEvalSettings(level=level))


def test_trec_eval_relstring_and_complete_num_rel_by_hand(tmp_path):
    """relstring: one character per ranked document (its grade, '-' unjudged, '.' a negative
    grade, '>' above 9), printed per query between P and recall; under -c the `all` num_rel
    counts every qrels line above 0, whatever -l says (trec_eval 9.0.8's calc_avg)."""
    from rubric.evaluate.leaderboards import leaderboard_output

    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 a 2\n1 0 b -1\n1 0 c 12\n1 0 d 1\n2 0 x 1\n3 0 z 2\n")
    run = tmp_path / "r.run"
    run.write_text("1 Q0 a 1 9 t\n1 Q0 b 2 8 t\n1 Q0 new 3 7 t\n1 Q0 c 4 6 t\n1 Q0 d 5 5 t\n2 Q0 y 1 1 t\n")
    out = leaderboard_output(
        qrels, [run], ["num_rel", "P.5", "relstring.4", "recall.5"], fmt="trec_eval", per_query=True, level=2
    ).text
    # trec_eval 9.0.8: -q -l 2 -m num_rel -m P.5 -m relstring.4 -m recall.5, the same files
    expected = (
        "num_rel 1 2|P_5 1 0.4000|relstring_4 1 '2.->'|recall_5 1 1.0000|num_rel 2 0|P_5 2 0.0000|"
        "relstring_4 2 '-'|recall_5 2 0.0000|num_rel all 2|P_5 all 0.2000|recall_5 all 0.5000"
    )
    assert out == "".join(f"{n:<22}\t{q}\t{v}\n" for n, q, v in (x.split() for x in expected.split("|")))
    complete = leaderboard_output(qrels, [run], ["num_rel"], fmt="trec_eval", complete=True, level=2).text
    assert complete == "num_rel               \tall\t5\n"
    assert leaderboard_output(qrels, [run], ["num_rel"], fmt="trec_eval", level=2).text.endswith("\t2\n")
