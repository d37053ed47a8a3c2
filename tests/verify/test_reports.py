"""The item-level reports on the hand-made graded file: every number known in advance."""

from __future__ import annotations

import pytest

from rubric.data.grade_filter import GradeFilter
from rubric.errors import UserError
from rubric.verify.graded_answers import grading_table
from rubric.verify.grid import grid_tables
from rubric.verify.impact import bank_impact, needs_grading_banks
from rubric.verify.matrix import load_matrix
from rubric.verify.spurious import item_counts, spurious_table
from rubric.verify.uncovered import uncovered_table


@pytest.fixture
def matrix(graded, fx):
    return load_matrix(graded, GradeFilter(fx.RATING))


def test_matrix_picks_the_answer_prompt_automatically(matrix, fx):
    assert matrix.kind.prompt_class == fx.RATING
    assert matrix.answer_kind is not None and matrix.answer_kind.prompt_class == fx.ANSWER
    assert matrix.ungraded == 1
    q1 = matrix.queries[0]
    assert q1.items == [fx.iid("q1", k) for k in "abc"]
    assert q1.passages[0].answers[fx.iid("q1", "a")] == "answer p1-a"
    assert q1.query_text == "cats"


def test_ambiguous_selection_lists_the_choices(graded, fx):
    with pytest.raises(UserError, match="ambiguous") as e:
        load_matrix(graded, GradeFilter())
    assert fx.RATING in str(e.value) and fx.DIRECT in str(e.value)


def test_grading_sorted_by_grade_per_item(matrix, fx):
    rows = list(grading_table(matrix).rows)  # rows stream as the table renders
    first = [r for r in rows if r[1] == fx.iid("q1", "b")]
    assert [(r[5], r[3]) for r in first] == [("p3", 5), ("p1", 4), ("p4", 4), ("p2", 0), ("p5", 0)]
    assert first[0][4] == "answer p3-b"
    assert len(rows) == 5 * 3 + 3 * 2


def test_grid_one_table_per_query(matrix, fx):
    tables = list(grid_tables(matrix, {fx.iid("q1", "a"): "what is a cat?"}))  # one query at a time
    assert [len(t.rows) for t in tables] == [5, 3]
    assert tables[0].rows[0][:4] == ["q1", "p1", 3, "5: answer p1-a"]
    assert tables[1].header[3] == fx.iid("q2", "d").split("/")[1][:8]
    assert any("what is a cat?" in n for n in tables[0].notes)
    plain = list(grid_tables(matrix, answers=False))
    assert plain[0].rows[0][3:] == [5, 4, 0]


def test_uncovered(matrix):
    table = uncovered_table(matrix, min_judgment=1, min_grade=4)
    assert table.notes == []  # the counts are known once the rows have streamed by
    assert [(r[0], r[1], r[2], r[3]) for r in table.rows] == [("q1", "p2", 2, 1)]
    assert table.notes == ["1 of 4 relevant passages uncovered in 2 queries"]
    assert len(list(uncovered_table(matrix, min_judgment=1, min_grade=6).rows)) == 4


def test_spurious(matrix, fx):
    counts = item_counts(matrix, max_judgment=0, min_grade=4)
    top = [(c.item_id, c.nonrelevant_high, c.nonrelevant) for c in counts[:2]]
    assert top == [(fx.iid("q2", "e"), 1, 1), (fx.iid("q1", "b"), 1, 2)]
    assert all(c.nonrelevant_high == 0 for c in counts[2:])
    assert len(spurious_table(matrix, 0, 4, top=1).rows) == 1


def test_impact_of_removing_and_rewriting_items(matrix, fx):
    after_questions = {
        "q1": {"a": fx.QUESTIONS["q1"]["a"], "c": "what food do cats eat?"},
        "q2": fx.QUESTIONS["q2"],
    }
    before, after = fx.bank(), fx.bank(after_questions)
    result = bank_impact(matrix, before, after)
    assert [(c[1], c[3], c[4]) for c in result.changes] == [("p3", 5, 0), ("p4", 4, 0), ("p5", 3, 0)]
    status = {r[1]: r[2] for r in result.items}
    assert status[fx.iid("q1", "b")] == "removed" and status[fx.iid("q1", "c")] == "removed"
    new_c = fx.item_id("q1", "what food do cats eat?")
    assert status[new_c] == "added"
    assert result.needs_grading == {"q1": {new_c}}
    todo = needs_grading_banks(after, result)
    assert [[it.item_id for it in b.items] for b in todo] == [[new_c]]
    assert result.passages == 8
    assert bank_impact(matrix, before, before).changes == []
