"""The original workbench's analyses we had not yet: Cover's correctAnswered mode and `_overall_`
row, facet-level qrels (--qrel-query-facets), binary qrels from direct grades (--label count)."""

from __future__ import annotations

import gzip
import json

import pytest

from rubric.data.grade_filter import GradeFilter
from rubric.data.labels import LabelRule
from rubric.data.models import TestBank
from rubric.evaluate.coverage import OVERALL, cover
from rubric.evaluate.facets import bank_facets
from rubric.evaluate.qrels import build_qrels

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def _write(path, lines):
    with gzip.open(path, "wt") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return path


@pytest.fixture
def answered_differs(tmp_path, builders):
    """p1's correctAnswered lists c (rated 2), not a (rated 5): the two modes disagree there."""
    lines = builders.graded_lines()
    qsr = lines[0][1][0]["exam_grades"][0]
    qsr["correctAnswered"], qsr["wrongAnswered"] = ["q1/c"], ["q1/a", "q1/b"]
    return _write(tmp_path / "graded.jsonl.gz", lines)


def _values(report):
    return {
        s.run: (round(s.value, 6), {q: round(v, 6) for q, v in s.per_query.items()}) for s in report.scores
    }


def test_cover_correct_answered_mode(answered_differs):
    by_rating = _values(cover(answered_differs, k=2, min_grade=5, selection=GradeFilter(QSR)))
    by_list = _values(cover(answered_differs, k=2, selection=GradeFilter(QSR), correct_answered=True))
    assert by_rating["alpha"][1]["q1"] == round(1 / 3, 6)  # rating 5: only a (p1)
    assert by_list["alpha"][1]["q1"] == round(2 / 3, 6)  # correctAnswered: c (p1) and b (p2)


def test_cover_overall_row_is_the_pool_upper_bound(graded):
    got = _values(cover(graded, k=1, min_grade=4, selection=GradeFilter(QSR), overall=True))
    assert got[OVERALL] == (round(1 / 3, 6), {"q1": round(2 / 3, 6), "q2": 0.0})  # a, b of 3 in q1
    assert all(got[OVERALL][1][q] >= v for run, (_, per) in got.items() for q, v in per.items())
    normalized = _values(cover(graded, k=1, selection=GradeFilter(QSR), overall=True, normalized=True))
    assert normalized[OVERALL] == (1.0, {"q1": 1.0, "q2": 1.0})  # as the original wrote it


def test_cover_per_query_tsv_reads_back_as_a_score_table(cli, graded, tmp_path):
    from rubric.evaluate.score_tables import read_score_table

    out = tmp_path / "cover.tsv"
    r = cli("evaluate", "cover", graded, "--prompt-class", QSR, "-k", "1", "-q", "--overall", "-o", out)
    assert r.returncode == 0, r.stderr
    table = read_score_table(out)
    assert table.per_query["cover@1"]["alpha"] == {"q1": pytest.approx(1 / 3, abs=1e-4), "q2": 0.0}
    assert table.summary["cover@1"][OVERALL] == pytest.approx(1 / 3, abs=1e-4)


@pytest.fixture
def faceted(tmp_path, builders):
    """A CAR-style page q1 with facets f1, f2, f3: items of f1 and f2, one TQA item (NDQ_1) of
    no facet, and a direct grade."""
    sun = {"correctAnswered": True, "answer": "yes", "llm": "t5", "prompt_info": {"prompt_class": "Sun"},
           "self_ratings": 1, "prompt_type": "direct"}  # fmt: skip
    exam, passage = builders.exam, builders.passage
    p1 = passage("p1", "q1", {"run": 1}, [exam(QSR, {"q1/f1/x": 5, "q1/f1/y": 2, "q1/f2/z": 0})], [sun])
    p2 = passage("p2", "q1", {"run": 2}, [exam("TQA", {"q1/f1/x": 1, "NDQ_1": 4})])
    return _write(tmp_path / "car.jsonl.gz", [["q1", [p1, p2]]])


BANK = [TestBank(query_id="q1", facet_id=f) for f in ("f1", "f2", "f3")]


def test_facet_qrels_from_item_ids(faceted):
    rows = build_qrels(faceted, selection=GradeFilter(QSR), rule=LabelRule("max"), facets={}).rows
    assert rows == [("q1/f1", "0", "p1", 5), ("q1/f2", "0", "p1", 0)]
    counted = build_qrels(faceted, selection=GradeFilter(QSR), rule=LabelRule("count", 2), facets={}).rows
    assert counted == [("q1/f1", "0", "p1", 2), ("q1/f2", "0", "p1", 0)]


def test_facet_qrels_items_without_facet_count_for_every_facet(faceted):
    facets = bank_facets(BANK)
    assert facets == {"q1": ["q1/f1", "q1/f2", "q1/f3"]}
    rows = build_qrels(faceted, selection=GradeFilter("TQA"), rule=LabelRule("max"), facets=facets).rows
    assert sorted(rows) == [("q1/f1", "0", "p2", 4), ("q1/f2", "0", "p2", 4), ("q1/f3", "0", "p2", 4)]
    from rubric.errors import UserError

    with pytest.raises(UserError, match="give the facet bank with facet_bank"):
        build_qrels(faceted, selection=GradeFilter("TQA"), rule=LabelRule("max"), facets={})


def test_facet_qrels_of_direct_grades(faceted):
    rows = build_qrels(
        faceted, selection=GradeFilter("Sun"), rule=LabelRule("max"), facets=bank_facets(BANK)
    ).rows
    assert rows == [("q1/f1", "0", "p1", 1), ("q1/f2", "0", "p1", 1), ("q1/f3", "0", "p1", 1)]


def test_cli_facets(cli, user_error, faceted, tmp_path):
    bank = tmp_path / "bank.jsonl"
    bank.write_text(
        "".join(json.dumps({"query_id": "q1", "facet_id": f, "items": []}) + "\n" for f in ("f1", "f2"))
    )
    out = tmp_path / "facets.qrels"
    r = cli("evaluate", "qrels", faceted, "--prompt-class", "Sun", "--per-facet", "--bank", bank, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == "q1/f1 0 p1 1\nq1/f2 0 p1 1\n"
    user_error(
        cli("evaluate", "qrels", faceted, "--prompt-class", "Sun", "--bank", bank, "-o", out), "--bank"
    )
    user_error(
        cli("evaluate", "qrels", faceted, "--prompt-class", QSR, "--per-facet", "--per-item", "-o", out),
        "--per-item",
    )


def test_direct_grades_binary_with_label_count(tmp_path, builders):
    direct = [
        {"correctAnswered": g >= 1, "answer": str(g), "llm": "m", "prompt_info": {"prompt_class": "UMBRELA"},
         "self_ratings": g, "prompt_type": "direct"}
        for g in range(4)
    ]  # fmt: skip
    lines = [["q1", [builders.passage(f"p{g}", "q1", {}, [], [d]) for g, d in enumerate(direct)]]]
    path = _write(tmp_path / "direct.jsonl.gz", lines)
    graded = build_qrels(path, selection=GradeFilter("UMBRELA"), rule=LabelRule("max")).rows
    assert [r[3] for r in graded] == [0, 1, 2, 3]
    binary = build_qrels(path, selection=GradeFilter("UMBRELA"), rule=LabelRule("count", 1)).rows
    assert [r[3] for r in binary] == [0, 1, 1, 1]  # = correctAnswered, the original's binary export
    strict = build_qrels(path, selection=GradeFilter("UMBRELA"), rule=LabelRule("count", 2)).rows
    assert [r[3] for r in strict] == [0, 0, 1, 1]
