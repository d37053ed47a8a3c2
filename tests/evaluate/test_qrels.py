from __future__ import annotations

import pytest

from rubric.data.grade_filter import GradeFilter
from rubric.data.jsonl import read_passages
from rubric.data.labels import LabelRule
from rubric.data.trec import read_qrels
from rubric.errors import UserError
from rubric.evaluate.qrels import build_qrels

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def labels(graded, rule="max", min_grade=1, **selection):
    result = build_qrels(
        list(read_passages(graded)), selection=GradeFilter(**selection), rule=LabelRule.parse(rule, min_grade)
    )
    return {(q, d): r for q, _, d, r in result.rows}, result


def test_max_count_and_nth_labels(graded):
    got, result = labels(graded, prompt_class=QSR)
    assert got == {("q1", "p1"): 5, ("q1", "p2"): 4, ("q1", "p3"): 0, ("q2", "p4"): 3}
    assert result.ungraded == 1 and result.passages == 5
    got, _ = labels(graded, "count", 2, prompt_class=QSR)
    assert got == {("q1", "p1"): 2, ("q1", "p2"): 1, ("q1", "p3"): 0, ("q2", "p4"): 1}
    got, _ = labels(graded, "nth:2", prompt_class=QSR)
    assert got == {("q1", "p1"): 2, ("q1", "p2"): 1, ("q1", "p3"): 0, ("q2", "p4"): 0}


def test_direct_grades_and_selection_errors(graded):
    got, _ = labels(graded, prompt_type="direct")
    assert got == {("q1", "p1"): 2}
    with pytest.raises(UserError, match="ambiguous"):
        labels(graded)
    with pytest.raises(UserError, match="no grades match prompt_class Nope") as e:
        labels(graded, prompt_class="Nope")
    assert QSR in str(e.value)  # lists what the file holds


def test_cli_qrels_and_per_item(cli, user_error, graded, tmp_path):
    out = tmp_path / "rubric.qrels"
    result = cli("evaluate", "qrels", graded, "--prompt-class", QSR, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "1 of 5 passages have no such grade" in result.stderr
    assert read_qrels(out) == {"q1": {"p1": 5, "p2": 4, "p3": 0}, "q2": {"p4": 3}}
    result = cli("evaluate", "qrels", graded, "--prompt-class", QSR, "--per-item", "-o", out)
    assert result.returncode == 0, result.stderr
    rows = {tuple(line.split()) for line in out.read_text().splitlines()}
    assert ("q1", "q1/b", "p2", "4") in rows and len(rows) == 10
    bad = tmp_path / "bad.qrels"
    user_error(
        cli("evaluate", "qrels", graded, "--prompt-type", "direct", "--per-item", "-o", bad), "--per-item"
    )
    user_error(cli("evaluate", "qrels", graded, "--label", "top", "-o", bad), "--label")
    user_error(cli("evaluate", "qrels", graded, "-o", bad), "ambiguous")
    assert not bad.exists()


def test_cli_qrels_map_puts_labels_on_another_scale(cli, user_error, graded, tmp_path):
    """0-5 labels written as 0-3 (a 0-3 submission): 0-1 -> 0, 2-3 -> 1, 4 -> 2, 5 -> 3."""
    out = tmp_path / "mapped.qrels"
    r = cli("evaluate", "qrels", graded, "-p", QSR, "--map", "2=1,4=2,5=3", "-o", out)
    assert r.returncode == 0, r.stderr
    assert read_qrels(out) == {"q1": {"p1": 3, "p2": 2, "p3": 0}, "q2": {"p4": 1}}  # from 5, 4, 0, 3
    assert "labels mapped by --map 2=1,4=2,5=3 (from the threshold up: 5+ -> 3, 4 -> 2, 2-3 -> 1" in r.stderr
    bad = tmp_path / "bad.qrels"
    user_error(
        cli("evaluate", "qrels", graded, "-p", QSR, "--map", "5:3", "-o", bad), "--map: expected GRADE=LEVEL"
    )
    assert not bad.exists()
