"""`rubric verify` end to end through the CLI on a hand-made graded file."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from helpers import graded_fixture as fx


@pytest.fixture
def graded(tmp_path) -> Path:
    return fx.write_graded(tmp_path / "graded.jsonl.gz")


def test_help_lists_every_report(cli):
    out = cli("verify", "--help").stdout
    for name in ("grading", "grid", "uncovered", "spurious", "agreement", "impact", "html"):
        assert name in out
    for name in ("grading", "agreement", "html"):
        assert "Example: rubric verify" in cli("verify", name, "--help").stdout


def test_agreement_tsv_and_latex(cli, graded, tmp_path):
    r = cli("verify", "agreement", graded, "-j", "2", "-p", fx.RATING, "-p", fx.DIRECT)
    assert r.returncode == 0, r.stderr
    assert f"# {fx.RATING}: binarised, grade >= T vs judgment >= 2" in r.stdout
    assert ">=4\t2\t3\t5\t-0.0769" in r.stdout
    assert f"# {fx.DIRECT}: relevant = grade >= min_grade" in r.stdout
    assert "1\t3\t1\t0\t3\t0.7200" in r.stdout  # direct prompt: T=1, tp fp fn tn kappa
    assert "best binarised kappa" in r.stderr
    out = tmp_path / "agreement.tex"
    r = cli("verify", "agreement", graded, "-j", "2", "-p", fx.RATING, "-f", "latex", "-o", out)
    assert r.returncode == 0 and r.stdout == ""
    assert out.read_text().count("\\toprule") == 3


def test_agreement_with_imported_llm_qrels(cli, graded, tmp_path):
    llm = tmp_path / "llm.qrels"
    human = tmp_path / "human.qrels"
    llm.write_text("q1 0 p1 3\nq1 0 p2 0\nq1 0 p3 3\nq1 0 px 1\n")
    human.write_text("q1 0 p1 3\nq1 0 p2 2\nq1 0 p3 0\n")
    for args in (["--judgments", human], [graded]):
        r = cli("verify", "agreement", *args, "--labels", llm, "-j", "2")
        assert r.returncode == 0, r.stderr
        assert "llm.qrels: 3 passages" in r.stderr  # px has no judgment
        assert "total\t1\t1\t1\t3" in r.stdout


def test_agreement_map_gives_multiclass_kappa(cli, graded):
    r = cli("verify", "agreement", graded, "-j", "2", "-p", fx.RATING, "--map", "5=3,4=1")
    assert r.returncode == 0, r.stderr
    assert "multiclass kappa" in r.stderr and "# grade\tjudgment=3" not in r.stdout
    assert "\n3\t1\t0\t0\t2\t3\n" in r.stdout  # label 5 -> 3: p1 (3), p3 (0), r2 (0)


def test_grading_markdown_with_answers(cli, graded):
    r = cli(
        "verify", "grading", graded, "--rating-prompt", fx.RATING, "--answer-prompt", fx.ANSWER, "-f", "md"
    )
    assert r.returncode == 0, r.stderr
    assert f"| q1 | {fx.iid('q1', 'b')} |  | 5 | answer p3-b | p3 | 0 |" in r.stdout
    r = cli("verify", "grading", graded, "--rating-prompt", fx.RATING, "--answer-prompt", "rating")
    assert f"q1\t{fx.iid('q1', 'b')}\t\t5\t5\tp3" in r.stdout


def test_grid_csv(cli, graded):
    r = cli("verify", "grid", graded, "-p", fx.RATING, "-f", "csv", "--grades-only")
    assert r.returncode == 0, r.stderr
    blocks = r.stdout.strip().split("\n\n")
    assert len(blocks) == 2
    rows = list(csv.reader(io.StringIO(blocks[0])))
    assert rows[0][:3] == ["query_id", "passage_id", "judgment"] and rows[1] == [
        "q1",
        "p1",
        "3",
        "5",
        "4",
        "0",
    ]


def test_uncovered_and_spurious(cli, graded):
    r = cli("verify", "uncovered", graded, "-p", fx.RATING, "--min-judgment", "1", "--min-grade", "4")
    assert r.returncode == 0, r.stderr
    assert [line.split("\t")[:4] for line in r.stdout.splitlines()[2:-1]] == [["q1", "p2", "2", "1"]]
    assert "1 of 4 relevant passages uncovered" in r.stderr
    r = cli(
        "verify", "spurious", graded, "-p", fx.RATING, "--max-judgment", "0", "--min-grade", "4", "--top", "2"
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()[2:]
    assert [line.split("\t")[1:4] for line in lines] == [
        [fx.iid("q2", "e"), "1", "1"],
        [fx.iid("q1", "b"), "1", "2"],
    ]


def test_impact_writes_the_bank_to_grade(cli, graded, tmp_path):
    before = fx.write_bank_file(tmp_path / "before.jsonl")
    after = fx.write_bank_file(
        tmp_path / "after.jsonl.gz", {"q1": {"a": fx.QUESTIONS["q1"]["a"], "c": "what food do cats eat?"}}
    )
    todo = tmp_path / "todo.jsonl"
    r = cli(
        "verify",
        "impact",
        graded,
        "-p",
        fx.RATING,
        "--bank-before",
        before,
        "--bank-after",
        after,
        "--needs-grading",
        todo,
    )
    assert r.returncode == 0, r.stderr
    assert "6 of 8 graded passages change label" in r.stderr  # q1: p3 p4 p5; q2 lost all items
    assert "q1\tp3\t0\t5\t0\t-5" in r.stdout
    assert "what food do cats eat?" in todo.read_text()
    assert "q2\t" in r.stdout  # q2 items were removed from the new bank
    assert "removed" in r.stdout


def test_user_errors(cli, graded, tmp_path, user_error):
    r = cli("verify", "agreement", graded)
    assert r.returncode == 2 and "ambiguous" in r.stderr and "Traceback" not in r.stderr
    user_error(cli("verify", "agreement", graded, "-p", "Nope"), "no grades match --prompt-class Nope")
    user_error(cli("verify", "grid", graded, "-p", fx.RATING, "-f", "xml"), "--format")
    user_error(cli("verify", "agreement", graded, "-p", fx.RATING, "--map", "5-3"), "--map")
    user_error(cli("verify", "agreement", graded, "-p", fx.RATING, "--label", "best"), "--label")
    user_error(cli("verify", "uncovered", tmp_path / "missing.jsonl.gz"), "missing.jsonl.gz: no such file")
    user_error(cli("verify", "spurious", graded, "-p", fx.DIRECT), "direct prompt")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('["q1", [{"paragraph_id": "p1"}]]\n')
    user_error(cli("verify", "grading", bad), "bad.jsonl:1", "text")
    out = tmp_path / "never.html"
    user_error(cli("verify", "html", graded, "-p", "Nope", "-o", out), "Nope")
    assert not out.exists()


@pytest.mark.parametrize(
    "report", ["grading", "grid", "uncovered", "spurious", "agreement", "impact", "html"]
)
def test_every_report_takes_a_query_subset(cli, user_error, graded, tmp_path, report):
    bank = fx.write_bank_file(tmp_path / "bank.jsonl")
    page = tmp_path / "page.html"
    extra = {
        "impact": ["--bank-before", bank, "--bank-after", fx.write_bank_file(tmp_path / "after.jsonl", {})],
        "html": ["-o", page],
    }.get(report, [])
    args = ["verify", report, graded, "-p", fx.RATING, *extra]
    r = cli(*args, "--query", "q2", "--query", "q7")
    assert r.returncode == 0, r.stderr
    out = page.read_text() if report == "html" else r.stdout
    assert "q1" not in out and "\tp1\t" not in out  # q1, its items and passages are gone
    shown = {"uncovered": "0 of 1 relevant passages uncovered in 1 queries", "agreement": "judgment=2\t"}
    assert shown.get(report, "q2") in out
    if report == "agreement":  # q2: r1 and r2 have a judgment
        assert f"{fx.RATING}: 2 passages;" in r.stderr
    assert f"1 query is not in {graded} (selected): q7" in r.stderr
    ids = tmp_path / "ids.txt"
    ids.write_text("# the second query\nq2\n")
    assert cli(*args, "--queries", ids).stdout == r.stdout
    user_error(cli(*args, "--query", "q7"), "--query/--queries: none of the selected queries", "q7")


def test_agreement_on_imported_qrels_takes_a_query_subset(cli, graded, tmp_path):
    llm = tmp_path / "llm.qrels"
    llm.write_text("q1 0 p1 3\nq1 0 p2 0\nq2 0 r1 3\nq2 0 r2 0\n")
    both = cli("verify", "agreement", graded, "--labels", llm)
    only = cli("verify", "agreement", graded, "--labels", llm, "--query", "q2")
    assert both.returncode == only.returncode == 0, only.stderr
    assert "llm.qrels: 4 passages" in both.stderr and "llm.qrels: 2 passages" in only.stderr


def test_multiclass_kappa_only_on_one_scale(cli, graded):
    """Grades 0-5 against judgments 0-3 unmapped: no multiclass kappa, and how to get one."""
    r = cli("verify", "agreement", graded, "-j", "2", "-p", fx.RATING)
    assert r.returncode == 0, r.stderr
    assert "multiclass kappa left out: grades reach 5, judgments 3" in r.stderr and "--map" in r.stderr
    mapped = cli("verify", "agreement", graded, "-j", "2", "-p", fx.RATING, "--map", "5=3,4=1")
    assert re.search(r"multiclass kappa -?\d\.\d{4}", mapped.stderr), mapped.stderr
