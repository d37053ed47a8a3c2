"""Nugget scores (V_strict, A_strict and partial variants) computed by hand."""

from __future__ import annotations

import json

import pytest

from rubric.errors import UserError
from rubric.evaluate.nuggets import aggregate, read_assigned, score_nuggets


def n(importance, assignment):
    return {"nugget_id": "x", "nugget_text": "x", "importance": importance, "assignment": assignment}


def test_scores_of_one_answer():
    s = score_nuggets(
        [n("vital", "support"), n("vital", "partial_support"), n("okay", "support"), n("okay", "not_support")]
    )
    assert s == {"V_strict": 0.5, "V_partial": 0.75, "A_strict": 0.5, "A_partial": 0.625}


def test_no_vital_nuggets_leaves_v_undefined():
    assert score_nuggets([n("okay", "support")])["V_strict"] is None


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_runs_average_over_queries_and_missing_answers_count_as_zero(tmp_path):
    f = write(
        tmp_path / "a.jsonl",
        [
            {"run_id": "r1", "query_id": "q1", "nuggets": [n("vital", "support"), n("okay", "not_support")]},
            {"run_id": "r1", "query_id": "q2", "nuggets": [n("vital", "partial_support")]},
            {"run_id": "r2", "query_id": "q1", "nuggets": [n("vital", "not_support"), n("okay", "support")]},
        ],
    )
    rows, runs = aggregate(read_assigned(f))
    by_run = {r.run_id: r for r in runs}
    assert by_run["r1"].means["V_strict"] == pytest.approx(0.5)  # (1 + 0) / 2
    assert by_run["r1"].means["V_partial"] == pytest.approx(0.75)  # (1 + 0.5) / 2
    assert by_run["r1"].stderrs["V_strict"] == pytest.approx(0.5)  # sd 0.7071 / sqrt(2)
    assert by_run["r2"].missing_queries == ["q2"]
    assert by_run["r2"].means["A_strict"] == pytest.approx(0.25)  # (0.5 + 0) / 2
    assert [r.run_id for r in runs] == ["r1", "r2"]
    assert len(rows) == 4


def test_unassigned_nugget_is_an_error_naming_the_line(tmp_path):
    f = write(
        tmp_path / "a.jsonl",
        [
            {"run_id": "r1", "query_id": "q1", "nuggets": [n("vital", "support")]},
            {"run_id": "r1", "query_id": "q2", "nuggets": [n("vital", None)]},
        ],
    )
    with pytest.raises(UserError, match=r"a.jsonl:2: nuggets\[0\] has no assignment"):
        read_assigned(f)
