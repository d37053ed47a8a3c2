from __future__ import annotations

import gzip
import json

import pytest

from rubric.data.grade_filter import GradeFilter
from rubric.data.jsonl import read_passages
from rubric.data.models import QuestionItem, TestBank
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
    assert got["alpha"] == (0.5, {"q1": 0.5})  # the queries evaluated: q3 is not in the file
    got = values(graded, k=2, min_grade=4, bank=bank, complete=True)
    assert got["alpha"] == (0.25, {"q1": 0.5, "q3": 0.0})  # like trec_eval -c: the bank's queries
    report = cover(graded, k=2, selection=GradeFilter(QSR), bank=bank)
    assert report.notes == [
        f"1 query is not in {graded} (queries of the bank; left out; -c counts them as 0): q3"
    ]


def test_python_api_takes_paths_and_the_cli_defaults(graded, tmp_path):
    bank_path = tmp_path / "bank.jsonl"
    items = [{"query_id": "q1", "question_id": f"q1/{x}", "question_text": x} for x in "ab"]
    bank_path.write_text(json.dumps({"query_id": "q1", "items": items}) + "\n")
    by_path = cover(graded, selection=GradeFilter(QSR), bank=bank_path)
    banks = [TestBank.model_validate({"query_id": "q1", "items": items})]
    loaded = cover(list(read_passages(graded)), k=20, min_grade=4, selection=GradeFilter(QSR), bank=banks)
    assert by_path.scores == loaded.scores
    assert by_path.title == "cover@20"  # k 20 and min_grade 4, as `rubric evaluate cover`
    assert by_path.get("alpha", "cover@20").per_query == {"q1": 1.0}  # a graded 5 (p1), b graded 4 (p2)
    assert cover(graded, selection=GradeFilter(QSR), min_grade=5).get("alpha", "cover@20").value == 1 / 6


def test_query_selection(graded):
    only = cover(graded, k=2, selection=GradeFilter(QSR), queries=["q2"])
    assert only.get("alpha", "cover@2").per_query == {"q2": 0.0}
    with pytest.raises(UserError, match="none of the selected queries is in"):
        cover(graded, selection=GradeFilter(QSR), queries=["q9"])
    partly = cover(graded, selection=GradeFilter(QSR), queries=["q1", "q9"])
    assert partly.notes == [f"1 query is not in {graded} (selected): q9"]


def test_direct_grades_are_refused(graded):
    with pytest.raises(UserError, match="Cover needs question or nugget grades"):
        cover(list(read_passages(graded)), selection=GradeFilter(prompt_type="direct"))


def test_cli_cover(cli, user_error, graded, tmp_path):
    result = cli("evaluate", "cover", graded, "--prompt-class", QSR, "-k", "2", "--min-grade", "4")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "run\tmeasure\tvalue\tstderr\tn_queries"
    assert lines[1].startswith("alpha\tcover@2\t0.3333\t") and lines[1].endswith("\t2")
    # the acceptance case: a bank of 3 queries, two selected: the mean is over exactly those 2
    bank = tmp_path / "bank.jsonl"
    item = {"question_id": "{}/a", "question_text": "a"}
    lines = [
        {"query_id": q, "items": [{**item, "query_id": q, "question_id": f"{q}/a"}]}
        for q in ("q1", "q2", "q3")
    ]
    bank.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = ["evaluate", "cover", graded, "--prompt-class", QSR, "--bank", bank]
    result = cli(*args, "--query", "q1", "--query", "q2")
    assert result.returncode == 0, result.stderr
    assert [line.split("\t")[-1] for line in result.stdout.splitlines()[1:]] == ["2", "2"]
    assert "q3" not in result.stderr
    result = cli(*args)  # q3 is not in the passages file: left out and said so
    assert [line.split("\t")[-1] for line in result.stdout.splitlines()[1:]] == ["2", "2"]
    assert "(queries of " in result.stderr and "-c counts them as 0): q3" in result.stderr
    result = cli(*args, "-c")
    assert [line.split("\t")[-1] for line in result.stdout.splitlines()[1:]] == ["3", "3"]
    ids = tmp_path / "ids.txt"
    ids.write_text("q1\n")
    result = cli(*args, "--queries", ids, "-f", "json")
    assert [r["n_queries"] for r in json.loads(result.stdout)] == [1, 1]
    user_error(cli(*args, "--query", "nope"), "--query/--queries: none of the selected queries is in", "nope")
    nobank = tmp_path / "none.jsonl"
    user_error(cli("evaluate", "cover", graded, "--bank", nobank), "none.jsonl")
    plain = tmp_path / "plain.jsonl.gz"
    with gzip.open(plain, "wt") as f:
        f.write(json.dumps(["q1", [{"paragraph_id": "p", "text": "t", "exam_grades": []}]]) + "\n")
    user_error(cli("evaluate", "cover", plain), "no grades")
