"""Negative judgments (TREC Web track qrels mark junk -2) are read as trec_eval 9.0.8 reads them
(``form_res_rels.c``): not relevant, "in the pool, not judged"; a query whose judgments are all
negative, which makes trec_eval's measure code (and so pytrec_eval) crash, is scored as a query
with nothing relevant. The audit's cases died with a segmentation fault (exit 139, no message),
so the commands run as real processes here."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import faults, graded_fixture
from rubric.evaluate.measures import parse_measures
from rubric.evaluate.treceval import Evaluator, TrecEvalSettings

rubric, rubric_subprocess = faults.rubric, faults.rubric_subprocess

RUN = (
    "q0 Q0 d1 1 3 r\nq0 Q0 d2 2 2 r\nq1 Q0 e1 1 3 r\nq1 Q0 e2 2 2 r\n"
    "q2 Q0 d1 1 3 r\nq2 Q0 d2 2 2 r\nq2 Q0 d9 3 1 r\n"
)
# q0 and q2: every judgment negative (q2 after a query with a relevant one: trec_eval then reuses
# q1's buffer with a negative length, exit 139 before the fix); q1: one relevant, one -2
QRELS = "q0 0 d1 -2\nq0 0 d2 -3\nq1 0 e1 -2\nq1 0 e2 1\nq2 0 d1 -2\nq2 0 d2 -5\nq2 0 d3 -1\n"


def _files(folder: Path) -> dict[str, Path]:
    folder.mkdir(exist_ok=True)
    files = {"run": folder / "a.run", "run2": folder / "b.run", "qrels": folder / "neg.qrels"}
    files["run"].write_text(RUN)
    files["run2"].write_text(RUN.replace(" r\n", " s\n").replace("e2 2 2", "e2 2 9"))
    files["qrels"].write_text(QRELS)
    return files


COMMANDS = {
    "leaderboard": ["evaluate", "leaderboard", "--qrels", "{qrels}", "--run", "{run}", "-m", "official"],
    "compare": [
        "evaluate", "compare", "--qrels", "{qrels}", "--run", "{run}", "--run", "{run2}", "-m", "P@2",
    ],
    "representative": [
        "evaluate", "representative", "--qrels", "{qrels}", "--run", "{run}", "--run", "{run2}", "-m", "P@2",
    ],
    "estimate": [
        "evaluate", "estimate", "--qrels", "{qrels}", "--human", "{qrels}", "--run", "{run}",
        "--run", "{run2}", "-m", "nDCG@10",
    ],
}  # fmt: skip


@pytest.mark.subprocess
@pytest.mark.parametrize("command", list(COMMANDS))
def test_all_negative_judgments_are_scored_not_crashed(tmp_path, command):
    f = _files(tmp_path)
    before = faults.snapshot(tmp_path)
    args = [str(f[a[1:-1]]) if a.startswith("{") else a for a in COMMANDS[command]]
    # a process of its own for the leaderboard (a crash is a signal there); the others in this one
    r = (rubric_subprocess if command == "leaderboard" else rubric)(*args)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert faults.snapshot(tmp_path) == before


def _values(qrels: dict, measures: str, judged_only: bool = False) -> dict[str, dict[str, float]]:
    evaluator = Evaluator(qrels, parse_measures([measures]), TrecEvalSettings(judged_only=judged_only))
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d9": 1.0}, "q2": {"e1": 3.0, "e2": 2.0}}
    values = evaluator.evaluate(run).values
    return {m.label: v for m, v in values.items()}


def test_a_query_with_only_negative_judgments_has_nothing_relevant():
    qrels = {"q1": {"d1": -2, "d2": -5, "d3": -1}, "q2": {"e2": 1}}
    v = _values(qrels, "map,P.2,ndcg_cut.10,bpref,recip_rank,Rprec,num_rel,num_ret,Judged@2")
    assert {m: col["q1"] for m, col in v.items()} == {
        "map": 0.0, "P.2": 0.0, "ndcg_cut.10": 0.0, "bpref": 0.0, "recip_rank": 0.0, "Rprec": 0.0,
        "num_rel": 0.0, "num_ret": 3.0, "Judged@2": 1.0,
    }  # fmt: skip
    # -J drops the negatives as unjudged: nothing is left of q1's ranking
    assert _values(qrels, "num_ret", judged_only=True)["num_ret"]["q1"] == 0.0


def test_a_negative_grade_is_not_relevant_and_not_judged():
    """trec_eval's reading, checked against the qrels with that line left out (unjudged): every
    measure but infAP (which reads "in the pool" apart) is the same, with and without -J."""
    measures = "map,P.2,ndcg_cut.10,bpref,recip_rank,Rprec,num_rel,num_rel_ret,RR(rel=1)@10,ERR@10"
    with_negative = {"q1": {"d1": -2, "d2": 1}, "q2": {"e1": -7, "e2": 1}}
    left_out = {"q1": {"d2": 1}, "q2": {"e2": 1}}
    for judged_only in (False, True):
        assert _values(with_negative, measures, judged_only) == _values(left_out, measures, judged_only)
    assert _values(with_negative, "num_ret", True)["num_ret"] == {"q1": 1.0, "q2": 1.0}


@pytest.mark.subprocess
def test_negative_grades_through_grade_import_and_evaluate_qrels(tmp_path):
    """The audit's pipeline: `grade import` takes -2, `evaluate qrels` writes it, the leaderboard
    scores it (it died with a segmentation fault)."""
    graded = graded_fixture.write_graded(tmp_path / "graded.jsonl.gz")
    (tmp_path / "neg.qrels").write_text("q1 0 p1 -2\nq1 0 p2 -3\nq2 0 r1 1\nq2 0 r2 -2\n")
    # in place, as docs/grading.md shows it
    r = rubric("grade", "import", graded, "--qrels", tmp_path / "neg.qrels", "-o", graded)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out.qrels"
    r = rubric("evaluate", "qrels", graded, "--prompt-class", "QrelImport", "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == (tmp_path / "neg.qrels").read_text()
    (tmp_path / "a.run").write_text("q1 Q0 p1 1 3 r\nq1 Q0 p2 2 2 r\nq2 Q0 r1 1 3 r\nq2 Q0 r2 2 1 r\n")
    r = rubric_subprocess(
        "evaluate", "leaderboard", "--qrels", out, "--run", tmp_path / "a.run", "-m", "P@2", "-q"
    )
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert b"r\tP@2\tq1\t0.0000" in r.stdout and b"r\tP@2\tq2\t0.5000" in r.stdout
