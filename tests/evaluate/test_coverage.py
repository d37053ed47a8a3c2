from __future__ import annotations

import gzip
import json

import pytest

from rubric.data.jsonl import read_passages
from rubric.data.models import QuestionItem, TestBank
from rubric.data.select import GradeFilter
from rubric.errors import UserError
from rubric.evaluate.coverage import cover

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def values(graded, **kw):
    report = cover(list(read_passages(graded)), selection=GradeFilter(QSR), **kw)
    return {
        s.run: (round(s.value, 6), {q: round(v, 6) for q, v in s.per_query.items()}) for s in report.scores
    }


def test_cover_at_k_counts_missing_queries_as_zero(graded):
    assert values(graded, k=1, min_grade=4) == {
        "alpha": (round(1 / 6, 6), {"q1": round(1 / 3, 6), "q2": 0.0}),
        "beta": (0.0, {"q1": 0.0, "q2": 0.0}),  # beta has no passage for q2: it counts 0
    }
    got = values(graded, k=2, min_grade=4)
    assert got["alpha"][0] == round(1 / 3, 6) and got["beta"][0] == round(1 / 6, 6)


def test_normalized_cover_divides_by_pool_answerable_items(graded):
    got = values(graded, k=1, min_grade=4, normalized=True)
    assert got["alpha"] == (0.25, {"q1": 0.5, "q2": 0.0})


def test_bank_items_and_queries_are_the_denominator(graded):
    bank = [
        TestBank(
            query_id="q1",
            items=[QuestionItem(query_id="q1", question_id=f"q1/{x}", question_text=x) for x in "abcd"],
        ),  # fmt: skip
        TestBank(query_id="q3", items=[QuestionItem(query_id="q3", question_id="q3/a", question_text="a")]),
    ]
    got = values(graded, k=2, min_grade=4, bank=bank)
    assert got["alpha"] == (0.25, {"q1": 0.5, "q3": 0.0})


def test_direct_grades_are_refused(graded):
    with pytest.raises(UserError, match="Cover needs question or nugget grades"):
        cover(list(read_passages(graded)), selection=GradeFilter(prompt_type="direct"))


def test_cli_cover(cli, user_error, graded, tmp_path):
    result = cli("evaluate", "cover", graded, "--prompt-class", QSR, "-k", "2", "--min-grade", "4")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "run\tmeasure\tvalue\tstderr\tn_queries"
    assert lines[1].startswith("alpha\tcover@2\t0.3333\t") and lines[1].endswith("\t2")
    nobank = tmp_path / "none.jsonl"
    user_error(cli("evaluate", "cover", graded, "--bank", nobank), "none.jsonl")
    plain = tmp_path / "plain.jsonl.gz"
    with gzip.open(plain, "wt") as f:
        f.write(json.dumps(["q1", [{"paragraph_id": "p", "text": "t", "exam_grades": []}]]) + "\n")
    user_error(cli("evaluate", "cover", plain), "no grades")
