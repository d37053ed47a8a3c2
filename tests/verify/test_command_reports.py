"""The library bodies of the `rubric verify` commands, called directly on the hand-made graded file:
what they write, the lines they report (in order), and that refused input writes nothing."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rubric.data.grade_filter import GradeFilter
from rubric.data.jsonl import read_bank
from rubric.data.labels import LabelRule
from rubric.data.query_selection import QuerySelection
from rubric.errors import UserError
from rubric.verify.agreement_report import AgreementRequest, agreement_report
from rubric.verify.apply import apply_review_files
from rubric.verify.graded_answers import grading_report
from rubric.verify.html import review_page
from rubric.verify.impact import impact_report
from rubric.verify.report import GradedSelection
from rubric.verify.review import file_sha256
from rubric.verify.reviewers import reviewer_agreement
from rubric.verify.uncovered import uncovered_report


@pytest.fixture
def selection(graded, fx) -> GradedSelection:
    return GradedSelection(graded, GradeFilter(fx.RATING))


def review_file(path: Path, graded: Path, reviewer: str, actions: list[dict], sha: str | None = None) -> Path:
    data = {
        "version": 1,
        "reviewer": reviewer,
        "source": {"file": graded.name, "sha256": sha or file_sha256(graded)},
        "actions": actions,
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def grade(fx, qid: str, pid: str, key: str, value: int) -> dict:
    return {
        "type": "grade",
        "query_id": qid,
        "paragraph_id": pid,
        "item_id": fx.iid(qid, key),
        "prompt_class": fx.RATING,
        "llm": fx.LLM,
        "grade": value,
    }


@pytest.fixture
def reviews(tmp_path, graded, fx) -> list[Path]:
    alice = review_file(
        tmp_path / "alice.json",
        graded,
        "alice",
        [
            grade(fx, "q1", "p2", "a", 4),
            grade(fx, "q2", "r1", "e", 0),
            {"type": "remove_item", "query_id": "q1", "item_id": fx.iid("q1", "c")},
        ],
    )
    bob = review_file(tmp_path / "bob.json", graded, "bob", [grade(fx, "q1", "p2", "a", 2)])
    return [alice, bob]


@pytest.fixture
def noted(caplog):
    """The notes the reports log (the `rubric` logger, which the command prints), so far."""
    caplog.set_level(logging.INFO, logger="rubric")
    return lambda: [r.getMessage() for r in caplog.records if r.name.startswith("rubric.")]


def test_grading_report_notes_the_counts_after_the_table(selection, tmp_path, noted):
    out = tmp_path / "grading.tsv"
    counts = grading_report(selection, None, 120, fmt="tsv", output=out)
    lines = noted()
    assert counts == {"grades": 21, "items": 5, "queries": 2}
    assert lines[-1] == "21 grades of 5 items in 2 queries"
    assert "1 passages have no" in lines[0]
    assert out.read_text(encoding="utf-8").count("\n") > 21


def test_uncovered_report_notes_its_counts(selection, tmp_path, noted):
    table = uncovered_report(selection, 2, 4, width=200, fmt="md", output=tmp_path / "u.md")
    lines = noted()
    assert lines[-1] == table.notes[0] == "1 of 3 relevant passages uncovered in 2 queries"


def test_impact_report_writes_the_bank_still_to_grade(selection, tmp_path, fx, noted):
    before = fx.write_bank_file(tmp_path / "before.jsonl.gz")
    edited = {**fx.QUESTIONS, "q1": {"a": fx.QUESTIONS["q1"]["a"], "x": "what do cats drink?"}}
    after = fx.write_bank_file(tmp_path / "after.jsonl.gz", edited)
    todo = tmp_path / "todo.jsonl.gz"
    result = impact_report(
        selection,
        before,
        after,
        rule=LabelRule(),
        fmt="tsv",
        output=tmp_path / "i.tsv",
        needs_grading=todo,
    )
    assert noted()[-2:] == [
        f"wrote {todo}: 1 banks with items to grade",
        result.changes_table().notes[0] + "; " + result.items_table().notes[0],
    ]
    [bank] = read_bank(todo)
    assert [i.question_text for i in bank.items] == ["what do cats drink?"]


def test_review_page_names_its_source_and_size(selection, graded, tmp_path, noted):
    page = tmp_path / "page.html"
    assert review_page(selection, page, {}, "auto", title="T <1>") == (2, 8)
    text = page.read_text(encoding="utf-8")
    assert file_sha256(graded) in text and "<title>T &lt;1&gt;</title>" in text
    assert noted()[-1] == f"wrote {page}: 2 queries, 8 passages, {page.stat().st_size // 1024} KiB"


@pytest.mark.parametrize(
    "change,message",
    [
        ({"plot": Path("x.png")}, "reviews: not used with plot or one_vs_rest"),
        ({"one_vs_rest": True}, "reviews: not used with plot or one_vs_rest"),
        ({"graded": None}, "reviews: give GRADED"),
        ({"judgments": Path("qrels.txt")}, "reviews: give GRADED"),
        ({"prompt_classes": ["A", "B"]}, "reviews: give at most one prompt_classes"),
        ({"fmt": "csv"}, "fmt: expected one of tsv, md, latex"),
    ],
)
def test_agreement_option_checks_come_before_any_file(tmp_path, change, message):
    missing = tmp_path / "missing.jsonl.gz"  # never opened: the checks refuse first
    request = AgreementRequest(**{"graded": missing, "reviews": True, "queries": missing, **change})
    with pytest.raises(UserError, match=message):
        agreement_report(request)


def test_agreement_label_is_checked_before_the_query_file_is_read(tmp_path):
    missing = tmp_path / "missing.txt"
    with pytest.raises(UserError, match="^label: expected"):
        agreement_report(AgreementRequest(tmp_path / "g.jsonl.gz", label="nth:0", queries=missing))


def test_agreement_report_one_side_per_prompt_class(graded, fx, noted):
    request = AgreementRequest(graded, prompt_classes=[fx.RATING, fx.DIRECT], one_vs_rest=True)
    report = agreement_report(request)
    lines = noted()
    assert [ag.name for ag in report.agreements] == [fx.RATING, fx.DIRECT]
    assert len(report.tables) > 2 * 3  # three tables a side, and the one-vs-rest tables
    assert lines == [ag.summary() for ag in report.agreements]
    assert lines[0].startswith(f"{fx.RATING}: 7 passages; best binarised kappa 0.0870 at grade >= 4")


def test_apply_checks_everything_before_writing(tmp_path, graded, reviews, fx):
    out = tmp_path / "reviewed.jsonl.gz"
    with pytest.raises(UserError, match="bank and bank_out go together"):
        apply_review_files([*reviews, tmp_path / "absent.jsonl.gz"], out, bank=tmp_path / "b", report=print)
    other = review_file(tmp_path / "carl.json", graded, "carl", [grade(fx, "q1", "p1", "a", 1)], sha="0" * 64)
    with pytest.raises(UserError, match="made from a file with sha256 000000000000"):
        apply_review_files([other, graded], out, report=print)
    bank = fx.write_bank_file(tmp_path / "bank.jsonl.gz", {"q2": fx.QUESTIONS["q2"]})  # lacks q1's items
    with pytest.raises(UserError, match="is not in the bank"):
        apply_review_files(
            [*reviews, graded], out, bank=bank, bank_out=tmp_path / "b2.jsonl.gz", report=print
        )
    assert not out.exists()


def test_apply_then_reviewer_agreement(tmp_path, graded, reviews, fx, noted):
    out, summary = tmp_path / "reviewed.jsonl.gz", tmp_path / "summary.json"
    bank_out = tmp_path / "bank2.jsonl.gz"
    bank = fx.write_bank_file(tmp_path / "bank.jsonl.gz")
    lines: list[str] = []
    applied = apply_review_files(
        [*reviews, graded], out, bank=bank, bank_out=bank_out, summary=summary, report=lines.append
    )
    assert applied.records == 3
    assert lines[0] == f"wrote {out}: 3 HumanReview records"
    assert f"wrote {bank_out}: 0 added, 1 removed, 0 rewritten" in lines
    assert lines[-1] == f"wrote {summary}"
    assert json.loads(summary.read_text(encoding="utf-8"))["bank"]["removed"] == 1

    found = reviewer_agreement(out, GradeFilter(fx.RATING), QuerySelection(("q1", "q9")))
    absent = noted()[-1]
    assert absent.startswith("1 query is not in") and absent.endswith("(selected): q9")
    assert found.lines() == [
        "google/flan-t5-large vs human:alice: 1 cells, kappa 0.0000",
        "google/flan-t5-large vs human:bob: 1 cells, kappa 0.0000",
        "human:alice vs human:bob: 1 cells, kappa 0.0000",
    ]
    assert found.tables[0].header[:3] == ["rater_a", "rater_b", "cells"]
